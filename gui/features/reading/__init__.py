"""Reading the open session: find in it, export it as a document, copy a message as
Markdown."""

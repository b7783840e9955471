"""The command line, written against the client API."""

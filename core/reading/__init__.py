"""Reading a session: the one fold of events into what a person reads (Qt-free).

The transcript, Compare and the document exports all read a session through this
package, so an entry means the same thing wherever it is shown:

- `entries`: the fold of events into entries (`build`, `TranscriptBuilder`), and the one
  rule for a failed call (`result_failed`); `compare`: two sessions of a lineage side by side.
- `markup`: Markdown (markdown-it-py) and code (Pygments) as HTML that Qt's rich text and a
  browser both read; `cards`: a tool call as a card of its kind; `diffs`: edits as
  numbered unified diffs; `images`: the images a log keeps (`Image.data()` and `mime` for
  thumbnails, `data_uri()` for documents).
- `render`: entries and cards as HTML (`entry_html(entry, card, folds=False)` for a view
  that folds on its own); `document`/`markdown_doc`: a whole session as one HTML file or
  as GitHub Markdown.
"""

#: the document formats a session exports to, and their files' suffixes (here, where the
#: CLI can read them without loading the renderer)
DOCUMENTS = {"markdown": ".md", "html": ".html"}

"""Which part of a title to keep when the list has no room for all of it: the part that
tells it apart from the rows around it.

Titles of one kind share long starts ("prompt 0 of thread 019a…: fix the failing test",
"Run the tests in packages/billing and …"): cut in the middle or at the end, every row
read alike. When a title shares a long start with a neighbouring row, the shown part
begins a few words before where they part, after an ellipsis.

Qt-free: the widget measures, this decides.
"""

from __future__ import annotations

from collections.abc import Iterable

from forkwise.core.reading.compare import common_prefix

#: characters of the shared start kept before where titles part (a word or two of context)
CONTEXT = 12
#: a shared start shorter than this is left alone (the usual cut keeps it in view)
SHORT = 20
#: what a shown part may start after
_BREAKS = frozenset(" /\\-_.:,(")


def differing_start(text: str, others: Iterable[str]) -> int:
    """Where the shown part of `text` starts: a little before the end of the longest
    start it shares with one of `others` (at a word), or 0 when it shares little."""
    shared = max((common_prefix(text, other) for other in others if other != text), default=0)
    if shared < SHORT:
        return 0
    start = shared - CONTEXT
    for back in range(start, max(start - CONTEXT, 0), -1):
        if text[back - 1] in _BREAKS:
            return back  # from a word's (or a path part's) start
    return start


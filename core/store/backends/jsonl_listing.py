"""The JSON Lines backend's sessions folder as a list: which files are logs, and the
summaries the index vouches for without reading a log (what a front end shows while the
store opens, `indexed_summaries`), of every session or of the first page by activity."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from forkwise.core.errors import ForkwiseError
from forkwise.core.log.event_log import gc_paused
from forkwise.core.store.backends.catalogue import Catalogue
from forkwise.core.store.backends.index_head import read_head
from forkwise.core.store.session import SessionSummary

Vouch = Callable[[str, os.stat_result], SessionSummary | None]


def scan(sessions_dir: Path) -> Iterator[os.DirEntry[str]]:
    """The session files of the folder (`<id>.jsonl`; nothing when there is no folder).
    A name that is not ASCII is no session's (ids are ASCII, log/ids.py): a file whose
    name is not even UTF-8, copied in by hand, made every listing fail (its id cannot be
    written to the index, the wire or the terminal); it is left alone, as a hidden file is."""
    try:
        with os.scandir(sessions_dir) as it:
            for entry in it:
                name = entry.name
                if name.endswith(".jsonl") and not name.startswith(".") and name.isascii():
                    yield entry
    except FileNotFoundError:
        return


def indexed_summaries(
    sessions_dir: Path,
    catalogue: Catalogue,
    path_of: Callable[[str], Path],
    newest: int | None = None,
) -> list[SessionSummary]:
    """The summaries the index vouches for (`Catalogue.vouched`): no log is read, no
    lock is needed. With `newest`: only the `newest` most recently active sessions at the
    top of their lineage and every session beneath them (a list sorted by activity: its
    first page), and only their logs are checked; a session beneath one the index does
    not vouch for is left out."""
    if newest is None:
        return catalogue.vouched(list(scan(sessions_dir)))
    # the index's head when it is current (index_head): the same entries, not all of
    # them; the whole index when the head runs out of tops its logs still match
    head = read_head(catalogue.path, newest)
    if head is not None:
        out, missing = _first_page(path_of, *head.lineage(), head.vouch, newest)
        if not missing or head.complete:
            return out
    return _first_page(path_of, *catalogue.lineage(), catalogue.vouch, newest)[0]


def _first_page(
    path_of: Callable[[str], Path],
    tops: Sequence[str],
    children: dict[str, list[str]],
    vouch: Vouch,
    newest: int,
) -> tuple[list[SessionSummary], int]:
    """The first `newest` tops that `vouch` vouches for and everything beneath them
    it vouches for, and how many tops short of `newest` `tops` ran."""
    out: list[SessionSummary] = []
    with gc_paused():
        for top in tops:
            if newest <= 0:
                break
            stack = [top]
            while stack:
                summary = _vouched(path_of, stack.pop(), vouch)
                if summary is None:
                    continue
                if summary.id == top:
                    newest -= 1
                out.append(summary)
                stack.extend(children.get(summary.id, ()))
    return out, newest


def _vouched(path_of: Callable[[str], Path], sid: str, vouch: Vouch) -> SessionSummary | None:
    try:
        st = os.stat(path_of(sid))
    except (OSError, ForkwiseError):
        return None
    return vouch(sid, st)

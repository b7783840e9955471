"""`forkwise store copy SRC DST`: every session of one store into another (a folder and a
PostgreSQL database, either way), headers and lines byte for byte, lineage intact.

Each session is created in the destination in one atomic write (`import_session`), so an
interrupted copy leaves whole sessions only; running it again skips those already there with
the same header and the same lines, and reports, without touching them, sessions that exist
in the destination with other contents.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from forkwise.core.errors import DuplicateSessionId, ForkwiseError
from forkwise.core.log.event_log import event_lines
from forkwise.core.store.opening import open_backend
from forkwise.core.store.session import Session
from forkwise.core.store.session_store import SessionStore

#: sessions copied between two re-openings of both stores (bounds what they keep in memory)
BATCH = 200


@dataclass
class CopyReport:
    copied: list[str] = field(default_factory=list)
    #: already in the destination, identical (a resumed copy)
    skipped: list[str] = field(default_factory=list)
    #: in the destination with other contents: left as they are
    conflicts: list[str] = field(default_factory=list)
    events: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "copied": len(self.copied),
            "skipped": len(self.skipped),
            "conflicts": self.conflicts,
            "events": self.events,
        }


def copy_store(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy every session of `source` into `target` (see the module docstring). The source
    is opened read-only; the target takes its writer lock (JSONL) or its sessions' writer
    locks (PostgreSQL)."""
    report = CopyReport()
    src = SessionStore(open_backend(source, writable=False))
    try:
        ids = src.ids()
    except BaseException:
        src.close()
        raise
    dst = SessionStore(open_backend(target))
    try:
        for n, sid in enumerate(ids, start=1):
            if n % BATCH == 0:  # forget what both stores loaded so far
                src.close()
                dst.close()
                src = SessionStore(open_backend(source, writable=False))
                dst = SessionStore(open_backend(target))
            _copy_one(src, dst, sid, report)
            if progress is not None:
                progress(n, len(ids))
    finally:
        src.close()
        dst.close()
    return report


def _copy_one(src: SessionStore, dst: SessionStore, sid: str, report: CopyReport) -> None:
    session = src.get(sid)
    try:
        dst.import_session(session.header, session.events)
    except DuplicateSessionId:  # there already (a resumed copy): the same, or left alone
        there = dst.get(sid)
        (report.skipped if _same(session, there) else report.conflicts).append(sid)
        return
    except ForkwiseError as exc:
        exc.message = f"session {sid!r} could not be copied: {exc.message}"
        raise
    report.copied.append(sid)
    report.events += session.last_seq


def _same(a: Session, b: Session) -> bool:
    return a.header == b.header and list(event_lines(a.events)) == list(event_lines(b.events))

"""The summary index beside the logs: `<store>/index.json`.

It only ever saves work: each entry records the size and mtime of the log it summarizes,
and an entry that does not match its file is recomputed from the file. A missing or
unreadable index is rebuilt; the logs are always the truth.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..atomic import write_file_atomically
from ..errors import ForkwiseError
from ..session import SessionSummary

log = logging.getLogger(__name__)
INDEX_VERSION = 1
Progress = Callable[[int, int], None]


class Catalogue:
    def __init__(self, path: Path, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self._entries: dict[str, dict[str, Any]] | None = None

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            try:
                data = orjson.loads(self.path.read_bytes())
                sessions = data.get("sessions") if isinstance(data, dict) else None
                if isinstance(sessions, dict) and data.get("version") == INDEX_VERSION:
                    self._entries = {k: v for k, v in sessions.items() if isinstance(v, dict)}
            except FileNotFoundError:
                pass
            except (OSError, orjson.JSONDecodeError) as exc:
                log.warning("ignoring unreadable catalogue %s: %s", self.path, exc)
        return self._entries

    def summaries(
        self,
        entries: Sequence[os.DirEntry[str]],
        summarize: Callable[[Path], SessionSummary],
        progress: Progress | None = None,
    ) -> list[SessionSummary]:
        index = self._load()
        out: list[SessionSummary] = []
        changed = False
        rebuilt = 0
        for n, entry in enumerate(entries, start=1):
            sid = entry.name[: -len(".jsonl")]
            try:
                st = entry.stat()
            except OSError:
                continue
            cached = index.get(sid)
            summary: SessionSummary | None = None
            if (
                cached
                and cached.get("size") == st.st_size
                and cached.get("mtime") == st.st_mtime_ns
            ):
                try:
                    summary = SessionSummary.from_index(cached["summary"])
                except (KeyError, TypeError):
                    summary = None
                if summary is not None and summary.id != sid:
                    summary = None
            if summary is None:
                summary = _summarize_or_error(sid, Path(entry.path), summarize)
                index[sid] = {
                    "size": st.st_size,
                    "mtime": st.st_mtime_ns,
                    "summary": summary.to_index(),
                }
                changed = True
                rebuilt += 1
                if progress is not None and rebuilt % 250 == 0:
                    progress(n, len(entries))
            out.append(summary)
        if changed:
            self._save()
        if progress is not None and rebuilt >= 250:
            progress(len(entries), len(entries))
        return out

    def remember(self, sessions_dir: Path, summaries: Sequence[SessionSummary]) -> None:
        """Record summaries the store computed itself (sessions it had loaded)."""
        if not summaries:
            return
        index = self._load()
        for summary in summaries:
            try:
                st = (sessions_dir / f"{summary.id}.jsonl").stat()
            except OSError:
                index.pop(summary.id, None)
                continue
            index[summary.id] = {
                "size": st.st_size,
                "mtime": st.st_mtime_ns,
                "summary": summary.to_index(),
            }
        self._save()

    def _save(self) -> None:
        if not self.writable or self._entries is None:
            return
        data = orjson.dumps({"version": INDEX_VERSION, "sessions": self._entries})
        try:
            write_file_atomically(self.path, data)
        except OSError as exc:  # the index is a cache: failing to save it loses nothing
            log.warning("could not save the catalogue %s: %s", self.path, exc)


def _summarize_or_error(
    sid: str, path: Path, summarize: Callable[[Path], SessionSummary]
) -> SessionSummary:
    try:
        return summarize(path)
    except ForkwiseError as exc:
        return SessionSummary(
            id=sid, created="", cwd="", error={"code": exc.code, "message": exc.message}
        )
    except OSError as exc:
        return SessionSummary(
            id=sid, created="", cwd="", error={"code": "storage-error", "message": str(exc)}
        )

"""OpenCode's older storage: a tree of JSON files under `<data>/storage/` (before OpenCode
moved them into `opencode.db`):

- `session/<projectID>/<sessionID>.json`: the session (`id`, `parentID`, `title`,
  `directory`, `version`, `revert`, `time.created`, `time.updated` …);
- `message/<sessionID>/<messageID>.json`: a message with its id and session id;
- `part/<messageID>/<partID>.json`: a part with its ids.

Each session file is a source file of its own (the ledger follows it: OpenCode rewrites it
as the session is updated); a fork is recognised among the sessions of its project, so
reading one session file reads its project's sessions (kept while their files are as they
were).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from threading import Lock
from typing import Any

import orjson

from ..base import FormatError, read_source
from .store import Message, Session

_CACHE_SIZE = 8


def storage_root(session_file: Path) -> Path:
    """`<data>/storage` of `storage/session/<projectID>/<sessionID>.json`."""
    return session_file.parent.parent.parent


def is_session_file(path: Path) -> bool:
    return path.suffix == ".json" and path.parent.parent.name == "session"


def session_files(storage: Path) -> Iterator[Path]:
    folder = storage / "session"
    try:
        projects = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return
    for project in projects:
        try:
            yield from sorted(p for p in project.iterdir() if p.suffix == ".json")
        except OSError:
            continue


def _load(path: Path) -> Any:
    try:
        return orjson.loads(read_source(path))
    except (OSError, orjson.JSONDecodeError):
        return None


def _children(folder: Path) -> list[dict[str, Any]]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = [_load(folder / name) for name in names if name.endswith(".json")]
    return [f for f in found if isinstance(f, dict)]


def _session(storage: Path, info: dict[str, Any]) -> Session:
    timing: dict[str, Any] = info["time"] if isinstance(info.get("time"), dict) else {}
    row = {
        "id": info["id"],
        "parent_id": info.get("parentID"),
        "title": info.get("title") or "",
        "directory": info.get("directory") or "",
        "version": info.get("version"),
        "revert": info.get("revert"),
        "time_created": timing.get("created"),
        "time_updated": timing.get("updated"),
    }
    session = Session(info["id"], row)
    records = _children(storage / "message" / info["id"])
    records.sort(key=lambda m: (_created(m), str(m.get("id", ""))))
    for record in records:
        mid = record.get("id")
        if not isinstance(mid, str):
            continue
        data = {k: v for k, v in record.items() if k not in ("id", "sessionID")}
        message = Message(mid, _created(record), data)
        message.parts = [
            {k: v for k, v in p.items() if k not in ("sessionID", "messageID")}
            for p in _children(storage / "part" / mid)
        ]
        session.messages.append(message)
    return session


def _created(record: dict[str, Any]) -> int:
    timing = record.get("time")
    created = timing.get("created") if isinstance(timing, dict) else None
    return int(created) if isinstance(created, (int, float)) else 0


class ProjectCache:
    """The sessions of a project folder, read once while its session files are unchanged."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[tuple[str, int, int], ...], list[Session]]] = {}
        self._lock = Lock()

    def forked(self) -> None:
        """In a forked child: a lock of its own (an import reads in forked workers)."""
        self._lock = Lock()

    def sessions(self, session_file: Path) -> list[Session]:
        project = session_file.parent
        try:
            files = sorted(p for p in project.iterdir() if p.suffix == ".json")
            stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
        except OSError as exc:
            raise FormatError(
                f"cannot read {project}: {exc.strerror or exc}", path=str(session_file)
            ) from exc
        with self._lock:
            known = self._known.get(str(project))
        if known is not None and known[0] == stamp:
            return known[1]
        storage = storage_root(session_file)
        loaded: list[Session] = []
        for path in files:
            info = _load(path)
            if isinstance(info, dict) and isinstance(info.get("id"), str):
                loaded.append(_session(storage, info))
            elif path == session_file:
                raise FormatError("not an OpenCode session file", path=str(path), line=1)
        loaded.sort(key=lambda s: (s.row.get("time_created") or 0, s.id))
        with self._lock:
            self._known[str(project)] = (stamp, loaded)
            while len(self._known) > _CACHE_SIZE:
                del self._known[next(iter(self._known))]
        return loaded

    def release(self) -> None:
        with self._lock:
            self._known.clear()

"""What earlier imports read, and what exports wrote: a module of its own, so that a host
that imports nothing (a one-shot `sessions list`, `context` or `fork`) does not load the
import verb and the formats behind it (python -X importtime: ~3 ms of every CLI start)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import orjson

from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import replace_file, write_file_atomically

if TYPE_CHECKING:
    from forkwise.core.store.session_store import SessionStore

#: the event an export leaves in the log of a session of Forkwise's own (`exporting.py`)
EXPORT_EVENT = "plugin/forkwise/export"


class Stamp(Protocol):
    """What tells a source changed: its size and modification time."""

    @property
    def st_size(self) -> int: ...

    @property
    def st_mtime_ns(self) -> int: ...


class _Stamp(NamedTuple):
    st_size: int
    st_mtime_ns: int


#: the names of the sources that are logs (the other tools' files), never SQLite databases
_LOGS = (".jsonl", ".json")


def source_stamp(path: Path, st: os.stat_result | None = None) -> Stamp:
    """A source's stamp (`st`: its stat, when the caller has it). A SQLite database
    (OpenCode's) in WAL mode changes in its `-wal` file until a checkpoint: its stamp
    counts both files. Raises OSError."""
    st = st if st is not None else path.stat()
    if path.name.endswith(_LOGS):
        return st  # a log, not a database: no `-wal` to look for (a stat a file saved)
    try:
        wal = os.stat(f"{path}-wal")
    except OSError:
        return st
    return _Stamp(st.st_size + wal.st_size, max(st.st_mtime_ns, wal.st_mtime_ns))


class ImportLedger:
    """Size and modification time of every source file imported, with the sessions it
    gave: a file whose size and mtime still match is not read again. A cache: losing it
    costs one full read, never a wrong import (sessions are compared before writing)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._files: dict[str, list[Any]] = {}
        #: the exports (`exports.json` beside the ledger): read when first asked
        self._exports: dict[str, Any] | None = None
        self._dirty = False
        #: the store whose logs rebuild a lost `exports.json` (`attach`)
        self._store: SessionStore | None = None
        #: whether this store ever wrote `exports.json`: a missing one was lost then (one
        #: never written is not looked for in every log)
        self._exported_once = False
        if path is not None:
            try:
                data = orjson.loads(read_regular(path)[0])  # no link, no FIFO's wait
                if isinstance(data, dict) and isinstance(data.get("files"), dict):
                    self._files = data["files"]
                    self._exported_once = data.get("exported") is True
            except (OSError, orjson.JSONDecodeError):
                self._files = {}

    def unchanged(self, path: Path, st: Stamp) -> list[str] | None:
        known = self._files.get(str(path))
        if (
            isinstance(known, list)
            and len(known) == 3
            and known[0] == st.st_size
            and known[1] == st.st_mtime_ns
            and isinstance(known[2], list)
        ):
            return [str(i) for i in known[2]]
        return None

    def sessions_of(self, path: Path) -> list[str]:
        """The sessions the file gave when it was last read, whatever it is now (a file
        the agent deleted gave them too)."""
        known = self._files.get(str(path))
        if isinstance(known, list) and len(known) == 3 and isinstance(known[2], list):
            return [str(i) for i in known[2]]
        return []

    def remember(self, path: Path, st: Stamp, ids: Sequence[str]) -> None:
        self._files[str(path)] = [st.st_size, st.st_mtime_ns, list(ids)]
        self._dirty = True

    def save(self) -> None:
        """After an import: the files read, and the exports read (once per ledger: a lost
        `exports.json` is rebuilt, records that no longer matter are dropped)."""
        if self.path is None:
            return
        self._exported()
        if self._dirty:
            self._write_files()

    def _write_files(self) -> None:
        if self.path is not None:
            data: dict[str, Any] = {"version": 1, "files": self._files}
            if self._exported_once:
                data["exported"] = True
            replace_file(self.path, orjson.dumps(data))
            self._dirty = False

    # --- what exports wrote: not a cache ----------------------------------

    @property
    def _exports_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name("exports.json")

    def attach(self, store: SessionStore) -> None:
        """The store the exports were made from: its logs rebuild a lost or unreadable
        `exports.json`, and it says which exported files were imported (`_pruned`)."""
        self._store = store

    def _exported(self) -> dict[str, Any]:
        if self._exports is None:
            where = self._exports_path
            found: dict[str, Any] | None = None
            lost = self._exported_once  # unless it is there
            if where is not None:
                try:
                    data = orjson.loads(read_regular(where)[0])
                    if isinstance(data, dict) and isinstance(data.get("exports"), dict):
                        found = data["exports"]
                    else:
                        lost = True
                except FileNotFoundError:
                    pass
                except (OSError, orjson.JSONDecodeError):
                    lost = True  # there, but unreadable
            rebuilt = found is None and lost and self._store is not None
            if rebuilt and self._store is not None:
                # the logs of Forkwise's own sessions hold an event per export
                found = exports_in_logs(self._store)
            found = found or {}
            if found and not self._exported_once:
                self._exported_once = self._dirty = True  # (a store exported before this)
            self._exports = kept = self._pruned(found)
            if where is not None and (rebuilt or len(kept) < len(found)):
                # not written (a read-only folder): the next host asks the logs again
                with contextlib.suppress(OSError):
                    write_file_atomically(where, orjson.dumps({"version": 1, "exports": kept}))
        return self._exports

    def _pruned(self, exports: dict[str, Any]) -> dict[str, Any]:
        """Without the records that can no longer matter: the file is gone and the store
        holds the session it gave (a file not imported yet may come back under another
        path, as Codex moves a rollout to its archive: its record is kept)."""
        store = self._store
        if store is None:
            return dict(exports)
        from forkwise.core.formats.base import source_session_id

        kept: dict[str, Any] = {}
        for key, record in exports.items():
            tool, _, tool_id = key.partition(":")
            path = record.get("path") if isinstance(record, dict) else None
            gone = isinstance(path, str) and not os.path.lexists(path)
            if gone and tool_id and store.exists(source_session_id(tool, tool_id)):
                continue
            kept[key] = record
        return kept

    def exported_from(self, tool: str, tool_id: str) -> str | None:
        """The Forkwise session a tool's session was exported from (Continue in), if
        this store wrote it: one dict look-up per session read."""
        known = self._exported().get(f"{tool}:{tool_id}")
        if isinstance(known, dict) and isinstance(known.get("session"), str):
            return str(known["session"])
        return None

    def exported_at(self, tool: str, tool_id: str) -> str | None:
        """When that export was written (None for a record from before this was kept)."""
        known = self._exported().get(f"{tool}:{tool_id}")
        at = known.get("at") if isinstance(known, dict) else None
        return at if isinstance(at, str) and at else None

    def remember_export(
        self, tool: str, tool_id: str, path: str, session_id: str, at: str | None = None
    ) -> None:
        """Record an export at once, atomically: unlike the files' sizes, losing it would
        import the file as a session of its own, not beneath the one it continues. `at`:
        when it was written (the date the session read back from it is created)."""
        exports = self._exported()
        exports[f"{tool}:{tool_id}"] = {"session": session_id, "path": path}
        if at is not None:
            exports[f"{tool}:{tool_id}"]["at"] = at
        where = self._exports_path
        if where is not None:
            write_file_atomically(where, orjson.dumps({"version": 1, "exports": exports}))
            if not self._exported_once:  # from now on a missing exports.json was lost
                self._exported_once = True
                self._write_files()


def exports_in_logs(store: SessionStore) -> dict[str, Any]:
    """The export records the logs hold (`EXPORT_EVENT`), as `exports.json` keeps them.

    Only a session of Forkwise's own records its exports in its log (an imported one's log
    follows its source): an export of an imported session is not in any log. Each log is
    read from the backend, not loaded into the store (a store of 10,000 sessions would
    keep them all), and only the export events are decoded."""
    from forkwise.core.log.event_log import event_types

    found: dict[str, Any] = {}
    for summary in store.list():
        if summary.source is not None:
            continue
        loaded = store.backend.load(summary.id)
        if loaded is None:
            continue
        events = loaded.events
        for i, etype in enumerate(event_types(events)):
            if etype != EXPORT_EVENT:
                continue
            fields = events[i].fields
            tool, tool_id, path = fields.get("tool"), fields.get("id"), fields.get("path")
            if isinstance(tool, str) and isinstance(tool_id, str) and isinstance(path, str):
                found[f"{tool}:{tool_id}"] = {
                    "session": summary.id, "path": path, "at": events[i].ts
                }
    return found

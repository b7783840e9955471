"""What earlier imports read, and what exports wrote: a module of its own, so that a host
that imports nothing (a one-shot `sessions list`, `context` or `fork`) does not load the
import verb and the formats behind it (python -X importtime: ~3 ms of every CLI start)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import replace_file, write_file_atomically


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
        if path is not None:
            try:
                data = orjson.loads(read_regular(path)[0])  # no link, no FIFO's wait
                if isinstance(data, dict) and isinstance(data.get("files"), dict):
                    self._files = data["files"]
            except (OSError, orjson.JSONDecodeError):
                self._files = {}

    def unchanged(self, path: Path, st: os.stat_result) -> list[str] | None:
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

    def remember(self, path: Path, st: os.stat_result, ids: Sequence[str]) -> None:
        self._files[str(path)] = [st.st_size, st.st_mtime_ns, list(ids)]
        self._dirty = True

    def save(self) -> None:
        if self.path is not None and self._dirty:
            replace_file(self.path, orjson.dumps({"version": 1, "files": self._files}))
            self._dirty = False

    # --- what exports wrote (DESIGN §10): not a cache ----------------------------------

    @property
    def _exports_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name("exports.json")

    def _exported(self) -> dict[str, Any]:
        if self._exports is None:
            self._exports = {}
            where = self._exports_path
            if where is not None:
                try:
                    data = orjson.loads(read_regular(where)[0])
                    if isinstance(data, dict) and isinstance(data.get("exports"), dict):
                        self._exports = data["exports"]
                except (OSError, orjson.JSONDecodeError):
                    pass
        return self._exports

    def exported_from(self, tool: str, tool_id: str) -> str | None:
        """The Forkwise session a tool's session was exported from (Continue in), if
        this store wrote it: one dict look-up per session read."""
        known = self._exported().get(f"{tool}:{tool_id}")
        if isinstance(known, dict) and isinstance(known.get("session"), str):
            return str(known["session"])
        return None

    def remember_export(self, tool: str, tool_id: str, path: str, session_id: str) -> None:
        """Record an export at once, atomically: unlike the files' sizes, losing it would
        import the file as a session of its own, not beneath the one it continues."""
        exports = self._exported()
        exports[f"{tool}:{tool_id}"] = {"session": session_id, "path": path}
        where = self._exports_path
        if where is not None:
            write_file_atomically(where, orjson.dumps({"version": 1, "exports": exports}))

"""What earlier imports read: a module of its own, so that a host that imports nothing
(a one-shot `sessions list`, `context` or `fork`) does not load the import verb and the
formats behind it (python -X importtime: ~3 ms of every CLI start)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import replace_file


class ImportLedger:
    """Size and modification time of every source file imported, with the sessions it
    gave: a file whose size and mtime still match is not read again. A cache: losing it
    costs one full read, never a wrong import (sessions are compared before writing)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._files: dict[str, list[Any]] = {}
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

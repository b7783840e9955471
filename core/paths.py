"""Where the store lives: `--store DIR`, else $FORKWISE_STORE, else the user data dir."""

from __future__ import annotations

import os
from pathlib import Path

STORE_ENV = "FORKWISE_STORE"


def default_store_dir() -> Path:
    import platformdirs  # only when no store is named: ~4 ms of every command otherwise

    return Path(platformdirs.user_data_dir("forkwise", appauthor=False)) / "store"


def resolve_store_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env).expanduser()
    return default_store_dir()

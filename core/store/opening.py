"""The one place a store location becomes a backend: a folder is a JSON Lines store, a
`postgresql://` URL a shared store in PostgreSQL (psycopg is imported only then)."""

from __future__ import annotations

import os
from pathlib import Path

from forkwise.core.errors import StorageError
from forkwise.core.paths import is_database_url
from forkwise.core.store.backend import Backend
from forkwise.core.store.backends.jsonl import JsonlBackend


def open_backend(store: str | os.PathLike[str], *, writable: bool = True) -> Backend:
    """The backend for `store` (a folder or a database URL)."""
    if is_database_url(store):
        assert isinstance(store, str)
        try:
            from forkwise.core.store.backends.postgres import PostgresBackend
        except ImportError as exc:
            raise StorageError(
                "a store in PostgreSQL needs psycopg: pip install 'forkwise[postgres]'"
            ) from exc
        return PostgresBackend(store, writable=writable)
    return JsonlBackend(Path(store), writable=writable)

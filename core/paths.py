"""Where the store lives: `--store DIR`, else $FORKWISE_STORE, else the user data dir.

A store may also be a PostgreSQL database, named by its URL (`postgresql://…`)."""

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


#: a store named by one of these is a PostgreSQL database, not a folder
DATABASE_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(store: object) -> bool:
    """Whether a `--store` value names a PostgreSQL database rather than a folder."""
    return isinstance(store, str) and store.startswith(DATABASE_SCHEMES)


def resolve_store(explicit: str | os.PathLike[str] | None = None) -> Path | str:
    """The store to open: a database URL as it was given, else the folder
    (`resolve_store_dir`)."""
    named = explicit or os.environ.get(STORE_ENV)
    if is_database_url(named):
        assert isinstance(named, str)
        return named
    return resolve_store_dir(explicit)


def database_state_dir(url: str) -> Path:
    """This machine's own files for a store in a database (the workspaces its sessions
    ran in, what it imported): a folder in the user data dir named after the URL (without
    any password in it)."""
    import hashlib  # (OpenSSL's library: not loaded for a store on disk, e.g. the app's start)

    digest = hashlib.sha256(store_label(url).encode()).hexdigest()[:16]
    return default_store_dir().parent / "databases" / digest


def store_label(store: str | os.PathLike[str]) -> str:
    """The store as a person may see it: a database URL without the password in it."""
    if not is_database_url(store):
        return str(store)
    from urllib.parse import urlsplit, urlunsplit

    text = str(store)
    try:
        parts = urlsplit(text)
        netloc = parts.netloc.rsplit("@", 1)
    except ValueError:  # not a URL urllib can read (`[::1`): its scheme and host part only
        head, _, rest = text.partition("://")
        return f"{head}://{rest.split('?', 1)[0].rsplit('@', 1)[-1]}"
    if len(netloc) == 2:
        netloc[0] = netloc[0].split(":", 1)[0]
    # libpq also takes the password as a parameter: `?password=…`
    query = "&".join(
        p for p in parts.query.split("&") if p.split("=", 1)[0].lower() != "password"
    )
    return urlunsplit(parts._replace(netloc="@".join(netloc), query=query))

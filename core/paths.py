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

    digest = hashlib.sha256(_state_key(url).encode()).hexdigest()[:16]
    return default_store_dir().parent / "databases" / digest


#: URL parameters libpq reads a secret from (a key may be percent-encoded: `%70assword`)
_SECRET_PARAMS = frozenset({"password", "sslpassword"})


def _url_parts(url: str) -> tuple[str, str, str, list[str]]:
    """A database URL as (scheme://, user part, the rest of the authority and path, its
    query parameters), split by hand: urllib refuses some URLs libpq reads (`[::1`)."""
    head, _, rest = url.partition("://")
    rest = rest.split("#", 1)[0]
    rest, _, query = rest.partition("?")
    authority, slash, path = rest.partition("/")
    user, at, host = authority.rpartition("@")
    return f"{head}://", user if at else "", host + slash + path, query.split("&") if query else []


def _secret_param(param: str) -> bool:
    from urllib.parse import unquote

    return unquote(param.split("=", 1)[0]).strip().lower() in _SECRET_PARAMS


def has_password(store: str | os.PathLike[str]) -> bool:
    """Whether a database URL carries a password (in its user part or a parameter)."""
    if not is_database_url(store):
        return False
    _, user, _, params = _url_parts(str(store))
    return ":" in user or any(_secret_param(p) for p in params)


def store_label(store: str | os.PathLike[str]) -> str:
    """The store as a person may see it: a database URL without the password in it."""
    if not is_database_url(store):
        return str(store)
    head, user, rest, params = _url_parts(str(store))
    user = user.split(":", 1)[0]
    kept = [p for p in params if not _secret_param(p)]
    return head + (f"{user}@" if user else "") + rest + ("?" + "&".join(kept) if kept else "")


def _state_key(url: str) -> str:
    """The URL without its password as `database_state_dir` has always named it (urllib's
    spelling: a socket URL `postgresql:///db` is `postgresql:/db` here); kept as it was,
    so that a machine's folder for a database keeps its name."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)
    except ValueError:
        head, _, rest = url.partition("://")
        return f"{head}://{rest.split('?', 1)[0].rsplit('@', 1)[-1]}"
    if len(netloc) == 2:
        netloc[0] = netloc[0].split(":", 1)[0]
    query = "&".join(p for p in parts.query.split("&") if p.split("=", 1)[0].lower() != "password")
    return urlunsplit(parts._replace(netloc="@".join(netloc), query=query))

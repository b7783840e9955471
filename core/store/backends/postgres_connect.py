"""Connecting to a store's database: libpq finds the password (URL, $PGPASSWORD, ~/.pgpass)
and TLS options pass through the URL; the system keyring is asked when libpq found none."""

from __future__ import annotations

import os
from typing import Any

import orjson
import psycopg
from psycopg.types.json import set_json_loads

from forkwise.core.errors import DatabaseNotUtf8, StorageError

#: where a password is looked up in the system keyring when libpq found none
KEYRING_SERVICE = "forkwise-postgres"


def connect(url: str, **options: Any) -> psycopg.Connection[Any]:
    """A connection to `url`. The password comes from the URL, $PGPASSWORD, ~/.pgpass
    (libpq reads those; TLS options such as sslmode pass through the URL) or, when none of
    them has one, the system keyring (service `forkwise-postgres`, user `role@host`)."""
    try:
        return _ready(psycopg.connect(url, autocommit=True, **options))
    except (psycopg.ProgrammingError, ValueError):  # a URL libpq cannot read:
        from forkwise.core.paths import store_label  # its message may quote the URL

        raise StorageError(
            f"cannot connect to the store database: {store_label(url)} is not a "
            "connection URL libpq can read",
            store=store_label(url),
        ) from None
    except psycopg.OperationalError as exc:
        secret = _keyring_password(url) if "password" in str(exc) else None
        if secret is None:
            raise StorageError(f"cannot connect to the store database: {first_line(exc)}") from exc
        try:
            return _ready(psycopg.connect(url, autocommit=True, password=secret, **options))
        except psycopg.OperationalError as again:
            raise StorageError(
                f"cannot connect to the store database: {first_line(again)}"
            ) from again


def _ready(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    """json columns decoded by orjson (10,000 summary rows at every listing). A database
    that does not store UTF-8 is refused: SQL_ASCII took the rows, then a title that is
    not ASCII broke its notifications and a copy back out."""
    encoding = conn.info.parameter_status("server_encoding")
    if encoding is not None and encoding.upper() not in ("UTF8", "UTF-8"):
        conn.close()
        raise DatabaseNotUtf8(
            f"the store database stores text as {encoding}, not UTF-8: create it with "
            "ENCODING 'UTF8' (createdb -E UTF8 -T template0)",
            encoding=encoding,
        )
    set_json_loads(orjson.loads, conn)
    return conn


def _keyring_password(url: str) -> str | None:
    try:
        import keyring  # the GUI extra has it; a server host may not
    except ImportError:
        return None
    info = psycopg.conninfo.conninfo_to_dict(url)
    user = info.get("user") or os.environ.get("PGUSER") or ""
    host = info.get("host") or os.environ.get("PGHOST") or "localhost"
    try:
        found = keyring.get_password(KEYRING_SERVICE, f"{user}@{host}")
    except Exception:  # no usable keyring backend: libpq's answer stands
        return None
    return found if isinstance(found, str) else None


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]

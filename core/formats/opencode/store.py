"""OpenCode's SQLite database, read without ever getting in OpenCode's way.

`$XDG_DATA_HOME/opencode/opencode.db` (else `~/.local/share/opencode/`) holds `session`
(`parent_id`, `title`, `directory`, `revert`, `time_*`, cost and tokens), `message` (`data`:
the message's JSON without its id and session id) and `part` (`data`: the part's JSON
without its ids). OpenCode writes it in WAL mode: a connection opened read-only
(`mode=ro`) reads one consistent snapshot inside a single transaction and never blocks
OpenCode's writer; a busy database is waited for a moment at most.

A row whose `data` is not a JSON object (cut, garbage) does not lose its session: a
message is kept where it stands as `UNREADABLE_MESSAGE` (its data `{UNREADABLE_KEY: the
text}`), a part as a part of type `UNREADABLE_PART`, each with a warning on its session.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from ..base import UNREADABLE_CODE, FormatError, ReadWarning, unreadable_text

SQLITE_MAGIC = b"SQLite format 3\x00"
DB_NAME = "opencode.db"
_BUSY_MS = 2000
#: the key of an unreadable message's data (its text), and the type of an unreadable part
UNREADABLE_KEY = "\0unreadable"
UNREADABLE_PART = "\0unreadable"


def data_dir(env: Mapping[str, str], home: Path) -> Path:
    """OpenCode's data folder: `$XDG_DATA_HOME/opencode` or `~/.local/share/opencode`."""
    base = env.get("XDG_DATA_HOME")
    return (Path(base) if base else home / ".local" / "share") / "opencode"


@dataclass(slots=True)
class Message:
    id: str
    created: int
    data: dict[str, Any]
    parts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def role(self) -> str:
        return str(self.data.get("role", ""))


@dataclass(slots=True)
class Session:
    id: str
    row: dict[str, Any]
    messages: list[Message] = field(default_factory=list)
    #: its rows whose data is not a JSON object (kept as unreadable messages and parts)
    warnings: list[ReadWarning] = field(default_factory=list)

    @property
    def parent_id(self) -> str | None:
        value = self.row.get("parent_id")
        return value if isinstance(value, str) and value else None

    @property
    def revert(self) -> dict[str, Any] | None:
        value = _json(self.row.get("revert"))
        return (
            value if isinstance(value, dict) and isinstance(value.get("messageID"), str) else None
        )


def unreadable_row(path: Path, table: str, row_id: str, session: str) -> ReadWarning:
    """The warning for a `message` or `part` row whose data is not a JSON object."""
    return ReadWarning(
        str(path),
        None,
        UNREADABLE_CODE,
        f"{table} {row_id} of session {session}: its data is not JSON: kept as it is, "
        "the rest of the session imported",
    )


def _text(raw: object) -> str:
    if isinstance(raw, bytes):
        return unreadable_text(raw)
    return str(raw)


def _json(value: object) -> Any:
    if isinstance(value, (str, bytes)):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def connect(path: Path) -> sqlite3.Connection:
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=_BUSY_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
    conn.execute("PRAGMA query_only = 1")
    return conn


def load(path: Path) -> list[Session]:
    """Every session of the database with its messages and parts, in creation order."""
    try:
        with open(path, "rb") as f:
            if f.read(16) != SQLITE_MAGIC:
                raise FormatError("not an OpenCode database", path=str(path))
        conn = connect(path)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}", path=str(path)) from exc
    except sqlite3.Error as exc:
        raise FormatError(f"cannot open {path}: {exc}", path=str(path)) from exc
    try:
        conn.execute("BEGIN")  # one snapshot for all three tables
        conn.row_factory = sqlite3.Row
        sessions: dict[str, Session] = {}
        for row in conn.execute("SELECT * FROM session ORDER BY time_created, id"):
            sessions[row["id"]] = Session(row["id"], dict(row))
        messages: dict[str, Message] = {}
        owners: dict[str, Session] = {}
        query = "SELECT id, session_id, time_created, data FROM message ORDER BY time_created, id"
        for mid, sid, created, data in conn.execute(query):
            session = sessions.get(sid)
            if session is None:
                continue
            record = _json(data)
            if not isinstance(record, dict):
                session.warnings.append(unreadable_row(path, "message", mid, sid))
                record = {UNREADABLE_KEY: _text(data)}
            message = Message(mid, int(created or 0), record)
            messages[mid] = message
            owners[mid] = session
            session.messages.append(message)
        for pid, mid, data in conn.execute(
            "SELECT id, message_id, data FROM part ORDER BY message_id, id"
        ):
            owner = messages.get(mid)
            if owner is None:
                continue
            part = _json(data)
            if not isinstance(part, dict):
                session = owners[mid]
                session.warnings.append(unreadable_row(path, "part", pid, session.id))
                part = {"type": UNREADABLE_PART, "text": _text(data)}
            owner.parts.append({"id": pid, **part})
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise FormatError(f"{path} is not an OpenCode database: {exc}", path=str(path)) from exc
    finally:
        conn.close()
    return list(sessions.values())

"""Workspaces: named groups of sessions, kept beside the logs in `<store>/workspaces.json`.

A session belongs to at most one workspace; one not yet placed counts as being in
`default`. The host attaches every new session and every fork child to its source's
workspace. The policy is an object the host is given, so a deployment (or a test) can
supply one whose attach refuses, without any switch in the host itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import orjson

from forkwise.core.errors import ReadOnlyStore, StorageError, WorkspaceAttachFailed
from forkwise.core.safe_read import read_regular
from forkwise.core.store.atomic import write_file_atomically

DEFAULT_WORKSPACE = "default"
FILE_VERSION = 1


class Workspaces(Protocol):
    """What the host needs from a workspace policy. Methods run on the host's store worker."""

    def groups(self) -> list[dict[str, Any]]: ...
    def workspace_of(self, session_id: str) -> str: ...
    def attach(self, workspace: str, session_id: str) -> None: ...
    def forget(self, session_id: str) -> None: ...


def check_workspace_name(workspace: object, session_id: str | None = None) -> str:
    """The name, or WorkspaceAttachFailed: checked before a session is created for it."""
    if not isinstance(workspace, str) or not workspace.strip():
        details = {"childId": session_id} if session_id else {}
        raise WorkspaceAttachFailed("a workspace needs a non-empty name", **details)
    return workspace


class MemoryWorkspaces:
    """Workspaces that live as long as the host (used with an in-memory store)."""

    def __init__(self) -> None:
        self._members: dict[str, list[str]] = {}

    def groups(self) -> list[dict[str, Any]]:
        return [{"name": n, "sessions": list(ids)} for n, ids in sorted(self._members.items())]

    def workspace_of(self, session_id: str) -> str:
        for name, ids in self._members.items():
            if session_id in ids:
                return name
        return DEFAULT_WORKSPACE

    def attach(self, workspace: str, session_id: str) -> None:
        check_workspace_name(workspace, session_id)
        members = _without(self._members, session_id)
        members.setdefault(workspace, []).append(session_id)
        self._commit(members)

    def forget(self, session_id: str) -> None:
        members = _without(self._members, session_id)
        if members != self._members:
            self._commit(members)

    def _commit(self, members: dict[str, list[str]]) -> None:
        self._members = members


class FileWorkspaces(MemoryWorkspaces):
    """Workspaces persisted as one JSON file, rewritten atomically on every change."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        try:
            data = orjson.loads(read_regular(path, follow=True)[0])  # never a FIFO's wait
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            raise StorageError(f"cannot read the workspaces file {path}: {exc}") from exc
        members = data.get("workspaces") if isinstance(data, dict) else None
        if isinstance(members, dict):
            self._members = {
                str(name): [str(s) for s in ids]
                for name, ids in members.items()
                if isinstance(ids, list)
            }

    def _commit(self, members: dict[str, list[str]]) -> None:
        """Write the new membership to disk first; memory changes only once it is there."""
        data = orjson.dumps(
            {"version": FILE_VERSION, "workspaces": members}, option=orjson.OPT_INDENT_2
        )
        try:
            write_file_atomically(self.path, data)
        except OSError as exc:
            raise StorageError(f"cannot write the workspaces file {self.path}: {exc}") from exc
        self._members = members


class ReadOnlyWorkspaces(FileWorkspaces):
    """The workspaces file of a store another process writes to: read, never written."""

    def _commit(self, members: dict[str, list[str]]) -> None:
        raise ReadOnlyStore(f"{self.path.parent} is open read-only; workspaces cannot change")


def _without(members: dict[str, list[str]], session_id: str) -> dict[str, list[str]]:
    return {name: [s for s in ids if s != session_id] for name, ids in members.items()}

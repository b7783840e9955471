"""What a client that reached the host over the network (`tcp:`) may do on the host's
machine: use its sessions, not its user's files.

A token holder is not the host's user. Such a client names no path on the host's machine:
a session it creates works in a fresh folder the host makes for it (under
`<store>/remote-workspaces`), it imports only from the agents' folders the host's own
settings name, and an export goes to the tool's own folder. It approves tool calls only in
sessions working in such a folder: a call in a session of the host's user (an imported
one, one made on the host) reads that user's files, which the client cannot see. It does
not move the endpoint of a provider that holds an API key: the key would go along.

Clients on the host's own unix socket (mode 0600: the host's user) and in-process ones
are the host's user and are not confined.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forkwise.core.errors import RemoteEndpointRefused, RemotePathRefused

#: the folder under the store's where remote clients' sessions work
REMOTE_WORKSPACES = "remote-workspaces"


def refuse_path(what: str, value: str) -> RemotePathRefused:
    """The error for a path a remote client named."""
    return RemotePathRefused(
        f"a client connected over the network cannot name {what} on the host's machine "
        f"({value!r}); the host uses only the folders its own user configured",
        parameter=what,
    )


def make_workspace(root: Path) -> str:
    """A new private folder under `root` for one remote client's session (0700)."""
    import tempfile  # loads shutil: only a remote client's create needs it

    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix="session-", dir=root)


def inside(root: Path | None, cwd: str) -> bool:
    """Whether the working folder `cwd` is one made under `root` (links resolved)."""
    if root is None or not cwd or "\x00" in cwd:
        return False
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(cwd))
    return real != real_root and real.is_relative_to(real_root)


def refuse_approval(session_id: str, cwd: str) -> RemotePathRefused:
    return RemotePathRefused(
        f"session {session_id!r} works in {cwd!r}, a folder of the host's user: a client "
        "connected over the network approves tool calls only in sessions it created",
        sessionId=session_id,
    )


def _endpoint(url: object) -> str:
    return url.strip().rstrip("/") if isinstance(url, str) else ""


def check_endpoint(current: Mapping[str, Any], wanted: Mapping[str, Any], keyed: bool) -> None:
    """Refuse new settings that move a keyed provider to another endpoint (`keyed`: the
    current endpoint has a key, from the environment or the keyring)."""
    if keyed and _endpoint(wanted.get("base_url")) != _endpoint(current.get("base_url")):
        raise RemoteEndpointRefused(
            "a client connected over the network cannot change the endpoint of a provider "
            "that has an API key (the key would be sent to the new endpoint); change it on "
            "the host's machine",
            baseUrl=_endpoint(current.get("base_url")),
        )

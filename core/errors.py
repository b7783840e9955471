"""One error family: every failure the core reports has a stable `code` string.

The codes cross process boundaries (CLI `--json`, JSON-RPC errors) unchanged, so clients
compare codes, never messages. Only the GUI turns them into words for a person.
"""

from __future__ import annotations

from typing import Any, ClassVar


class ForkwiseError(Exception):
    """Base of every error the core raises on purpose."""

    code: ClassVar[str] = "forkwise-error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = dict(self.details)
        return out


class SourceNotFound(ForkwiseError):
    code = "source-not-found"


class StaleSession(ForkwiseError):
    code = "stale-session"


class DuplicateSessionId(ForkwiseError):
    code = "duplicate-session-id"


class InvalidBoundary(ForkwiseError):
    code = "invalid-boundary"


class BoundaryInOpenTurn(ForkwiseError):
    code = "boundary-in-open-turn"


class InvalidSessionId(ForkwiseError):
    code = "invalid-session-id"


class InvalidEvent(ForkwiseError):
    """An event offered for appending breaks the log's rules (bracket, fields)."""

    code = "invalid-event"


class CorruptLog(ForkwiseError):
    """A stored log cannot be read; details name the file and the line."""

    code = "corrupt-log"


class BrokenSeed(CorruptLog):
    """A log whose start is stored by reference in another session's file cannot be read
    whole: that session is gone, shorter, or changed below the reference."""

    code = "seed-reference-broken"


class UnsupportedVersion(ForkwiseError):
    code = "unsupported-version"


class InvalidText(ForkwiseError):
    """Text that is not valid UTF-8 (e.g. a path with bytes that are not UTF-8, decoded
    with surrogate escapes): the JSON logs and the wire cannot carry it, so it is refused
    by name rather than stored altered."""

    code = "invalid-text"


class StorageError(ForkwiseError):
    """The operating system refused a read or write (disk full, permissions, …)."""

    code = "storage-error"


class DatabaseNotUtf8(ForkwiseError):
    """A store database whose server encoding is not UTF-8 (SQL_ASCII): refused at once."""

    code = "database-not-utf8"


class StoreLocked(ForkwiseError):
    """Another process holds the store's writer lock and does not serve the store."""

    code = "store-busy"


class ReadOnlyStore(ForkwiseError):
    code = "read-only-store"


class MessageNotFound(ForkwiseError):
    code = "message-not-found"


class ForkUnavailable(ForkwiseError):
    code = "fork-unavailable"


class SessionBusy(ForkwiseError):
    code = "session-busy"


class AgentOwnsTurn(ForkwiseError):
    """The open turn is an agent's, written into its own file (an imported session it is
    still writing): it is stopped there, not here, so Forkwise does not cancel it."""

    code = "agent-owns-turn"


class WorkspaceAttachFailed(ForkwiseError):
    code = "workspace-attach-failed"


class ApprovalNotFound(ForkwiseError):
    """The approval named is not pending (never asked, already answered, or its turn ended)."""

    code = "approval-not-found"


class Unauthorized(ForkwiseError):
    """A socket client did not present the host's token."""

    code = "unauthorized"


class ProviderError(ForkwiseError):
    """The model endpoint failed (unreachable, refused, bad answer, stream cut)."""

    code = "provider-error"


class HostUnavailable(ForkwiseError):
    """A remote host could not be reached or the connection was lost."""

    code = "host-unavailable"


class NotRegularSource(ForkwiseError):
    """A file of an agent's folder that is a FIFO, socket, device or folder: never read
    (a FIFO would wait for a writer forever, /dev/zero never ends)."""

    code = "not-a-regular-file"


class LinkOutOfFolder(ForkwiseError):
    """A file of an agent's folder that is a symbolic link to something outside the
    folder it is in: not followed."""

    code = "link-out-of-folder"


class SourceTooLarge(ForkwiseError):
    """A file (or what a compressed one inflates to) larger than Forkwise reads."""

    code = "source-too-large"


class TargetExists(ForkwiseError):
    """An export's target exists already (a file, another session, a folder, a FIFO):
    an export writes a new file, it never replaces one."""

    code = "exists"


class QueryTooLong(ForkwiseError):
    """A search query longer than a person types: refused before it holds the index."""

    code = "query-too-long"


class RemotePathRefused(ForkwiseError):
    """A client connected over the network named a path on the host's machine (a working
    folder, a file to import, an export target) or asked to approve a tool call outside
    the folders the host made for such clients. A token lets a client use the sessions,
    not the host user's files."""

    code = "remote-path-refused"


class RemoteEndpointRefused(ForkwiseError):
    """A client connected over the network tried to change the endpoint of a provider that
    has an API key: the key would go to the new endpoint."""

    code = "remote-endpoint-refused"


class RpcError(ForkwiseError):
    """A malformed or refused JSON-RPC request."""

    code = "rpc-error"


def _all_subclasses(cls: type[ForkwiseError]) -> list[type[ForkwiseError]]:
    out: list[type[ForkwiseError]] = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_all_subclasses(sub))
    return out


def error_from_code(
    code: str, message: str, details: dict[str, Any] | None = None
) -> ForkwiseError:
    """Rebuild a typed error from its wire form (used by remote clients)."""
    for cls in _all_subclasses(ForkwiseError):
        if cls.code == code:
            return cls(message, **(details or {}))
    err = ForkwiseError(message, **(details or {}))
    err.code = code  # type: ignore[misc]
    return err

"""Errors in plain words: the only place where error codes become sentences for a person."""

from __future__ import annotations

from forkwise.core.errors import ForkwiseError

_WORDS: dict[str, str] = {
    "fork-unavailable": "This turn has not finished yet, so there is nothing complete to fork "
    "from here. Wait for it to finish, or fork from an earlier message.",
    "boundary-in-open-turn": "A fork cannot cut a turn in half. Pick the message that starts "
    "the turn, or fork from here instead.",
    "session-busy": "This session is busy (a turn is running or waiting for an approval). "
    "Wait for it, or press Stop, then try again.",
    "agent-owns-turn": "The agent this session was imported from is still writing this turn "
    "in its own file: stop it there, or fork the session to go on here. Nothing was changed.",
    "workspace-attach-failed": "The fork was created, but it could not be added to its "
    "workspace. It is in the session list; you can keep using it.",
    "message-not-found": "That message is no longer in this session (it may have been "
    "replaced). The transcript has been refreshed.",
    "source-not-found": "That session no longer exists.",
    "stale-session": "This session changed while you were working with it. Try again.",
    "host-unavailable": "The host cannot be reached. Check that it is running.",
    "provider-error": "The model could not answer",
    "storage-error": "Forkwise could not read or write the session files",
    "store-busy": "Another program is using this store and does not share it. Close it, or open a "
    "different store with --store.",
    "read-only-store": "This store is read-only, so nothing can be changed.",
    "corrupt-log": "A session file could not be read",
    "seed-reference-broken": "This branch's start is kept in the session it branched from, "
    "and that session's file is gone or was changed outside Forkwise: the branch cannot be "
    "read whole.",
    "unsupported-version": "A session file was written by a newer Forkwise.",
    "invalid-boundary": "That point is not inside the session.",
    "duplicate-session-id": "A session with that id exists already.",
    "rpc-error": "The host refused the request",
    "invalid-session-id": "That is not a valid session id.",
    "invalid-event": "The host refused to record this: it would break the session's log",
    "invalid-text": "This text cannot be stored as it is (it is not valid UTF-8, as a file "
    "name can be), so nothing was changed",
    "approval-not-found": "That approval no longer waits for an answer (it was answered, or "
    "its turn ended).",
    "unauthorized": "The host refused the access token. Check the token, then connect again.",
    "not-a-regular-file": "An agent's folder holds something named like a session file that "
    "is not a file (a pipe or a device): Forkwise does not read it",
    "link-out-of-folder": "An agent's folder holds a link to a file outside that folder: "
    "Forkwise does not follow it",
    "source-too-large": "A session file (or what a compressed one unpacks to) is larger than "
    "Forkwise reads",
    "exists": "A file is already there, and an export never replaces one",
    "query-too-long": "The search words are too long; search for fewer words.",
    "remote-path-refused": "The host does not let a client connected over the network use "
    "its own folders or files (a working folder, an import path, an export target). Run "
    "that on the host's machine.",
    "remote-endpoint-refused": "The host does not let a client connected over the network "
    "move a provider that has an API key to another address (the key would go there).",
    "import-failed": "A session file could not be imported",
    "unknown-format": "This file is not a session of any agent Forkwise reads",
    "database-not-utf8": "The PostgreSQL database does not store text as UTF-8, which "
    "session titles and messages need. Use a database created with ENCODING 'UTF8'.",
}

#: codes whose core message adds useful specifics after the plain sentence
_WITH_DETAIL = {"provider-error", "storage-error", "corrupt-log", "rpc-error", "invalid-event",
                "invalid-text", "not-a-regular-file", "link-out-of-folder", "source-too-large",
                "exists", "import-failed", "unknown-format"}


def error_code(exc: BaseException) -> str:
    return exc.code if isinstance(exc, ForkwiseError) else "internal"


#: said after a failure of something the person typed (the composer keeps it until the
#: host accepts it): only then, not for forks, loads or the store at start-up
TEXT_KEPT = "Your text is still in the message box."


def describe(exc: BaseException, what: str = "", *, text_kept: bool = False) -> str:
    """One or two sentences for a person; never a traceback. `what` names the action
    that failed; `text_kept` adds that the person's text was not lost (see the callers:
    sending and edit-and-resend pass it, nothing else involves text)."""
    words = _sentence(exc, what)
    return f"{words} {TEXT_KEPT}" if text_kept else words


def _sentence(exc: BaseException, what: str) -> str:
    prefix = f"{what} failed. " if what else ""
    if isinstance(exc, ForkwiseError):
        words = _WORDS.get(exc.code)
        if words is None:
            return f"{prefix}{exc.message}"
        if exc.code in _WITH_DETAIL and exc.message:
            return f"{prefix}{words}: {exc.message}"
        return f"{prefix}{words}"
    if isinstance(exc, ConnectionError):
        return f"{prefix}The connection to the host was lost ({exc}). Check that it is running."
    if isinstance(exc, TimeoutError):  # an OSError too: checked before the file case
        return f"{prefix}The host did not answer in time."
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        reason = (exc.strerror or str(exc)).rstrip(".").lower()
        return f"{prefix}A file could not be read or written{where}: {reason}."
    return f"{prefix}Something went wrong inside Forkwise ({type(exc).__name__}: {exc})."


def _os_reason(exc: OSError, location: str) -> str:
    """The operating system's reason, without the errno (and the path, if it is `location`)."""
    if isinstance(exc, FileExistsError | NotADirectoryError):
        name = str(exc.filename or location)
        return f"{'it' if name == location else name} is a file, not a folder"
    return (exc.strerror or str(exc)).rstrip(".").lower()


def describe_store_open(exc: BaseException, location: str, *, remote: bool) -> tuple[str, str]:
    """Why the store at `location` (a folder, or a host address when `remote`) could not be
    opened at start-up, and what the person can do about it: (what happened, what to do)."""
    if remote:
        what = f"Forkwise could not reach the host at {location}"
        advice = ("Check that `forkwise host` is running there and that the address and "
                  "the access token are right, then start Forkwise again.")
    else:
        what = f"Forkwise could not open the session store at {location}"
        advice = ("Start Forkwise with --store set to a folder you can read and write (or "
                  "set FORKWISE_STORE), or fix that folder's permissions, then start again.")
    if isinstance(exc, ForkwiseError):
        reason = describe(exc)
        return f"{what}. {reason}", advice
    if isinstance(exc, OSError):
        return f"{what}: {_os_reason(exc, location)}.", advice
    return f"{what}. {describe(exc)}", advice

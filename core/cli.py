"""`forkwise sessions …`: the scriptable command-line contract.

Plain output is for people; `--json` output is for programs and stays stable. Errors are
one sentence on stderr and exit status 1 (with `--json`: `{"error": {code, message}}` on
stdout); usage errors exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import orjson

from . import shared_store
from .backends.jsonl import JsonlBackend, parse_log
from .errors import (
    CorruptLog,
    DuplicateSessionId,
    ForkwiseError,
    InvalidBoundary,
    SessionBusy,
    StorageError,
    StoreLocked,
)
from .paths import resolve_store_dir
from .session import Session, SessionSummary
from .store import SessionStore
from .turns import message_boundary, open_turn_start

SUBCOMMANDS = ("sessions", "host")
#: options that take a value, so the value is not mistaken for the subcommand
_VALUE_OPTIONS = ("--store", "--connect", "--token-file")


def is_cli_invocation(args: Sequence[str]) -> bool:
    """True when `args` name a CLI subcommand (or ask only for the version)."""
    if list(args) == ["--version"]:
        return True
    positional: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in _VALUE_OPTIONS:
            skip = True
        elif not a.startswith("-"):
            positional.append(a)
    return bool(positional) and positional[0] in SUBCOMMANDS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # usage errors: exit 2, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


class VersionAction(argparse.Action):
    """`--version`, looked up only when asked for (reading package metadata takes ~20 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from . import __version__

        print(f"forkwise {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--store",
        metavar="DIR",
        help="store directory (default: $FORKWISE_STORE or the user data dir)",
    )
    common.add_argument("--json", action="store_true", help="machine-readable output")
    _connect_options(common, argparse.SUPPRESS)  # given after the subcommand

    parser = _Parser(prog="forkwise", description="Browse and branch AI-agent sessions.")
    parser.add_argument(
        "--version", action=VersionAction, nargs=0, help="print the version and exit"
    )
    _connect_options(parser, None)  # given before it
    top = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    host = top.add_parser("host", help="serve the store to other processes (headless host)")
    host.add_argument("--store", metavar="DIR", help="store directory")
    host.add_argument(
        "--listen", required=True, metavar="unix:PATH|tcp:HOST:PORT", help="where to listen"
    )
    host.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback tcp address"
    )
    host.add_argument(
        "--token-file",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="clients must present the token in FILE (required for tcp)",
    )
    sessions = top.add_parser(
        "sessions", help="list, show, create, fork, truncate and import sessions"
    )
    sub = sessions.add_subparsers(dest="action", required=True, parser_class=_Parser)

    sub.add_parser("list", parents=[common], help="list sessions, newest activity first")
    show = sub.add_parser("show", parents=[common], help="show a session's header and events")
    show.add_argument("id")
    new = sub.add_parser("new", parents=[common], help="create an empty session; prints its id")
    new.add_argument("--id", dest="session_id")
    new.add_argument("--title")
    new.add_argument(
        "--cwd", default=None, help="working directory recorded in the header (default: here)"
    )
    fork = sub.add_parser("fork", parents=[common], help="fork a session into a new child")
    fork.add_argument("source")
    fork.add_argument(
        "--boundary",
        metavar="N|end",
        help="exact store boundary: copy events 1..N ('end': the last event). "
        "Without it: through the last completed turn.",
    )
    fork.add_argument("--child", metavar="ID", help="id for the child (default: a new id)")
    fork.add_argument(
        "--at",
        type=int,
        metavar="N",
        help="host anchor rule: through the first turn end at or after seq N",
    )
    fork.add_argument("--message", metavar="MSG_ID", help="fork through that message's turn")
    fork.add_argument(
        "--exclude-message", action="store_true", help="with --message: fork before its turn"
    )
    fork.add_argument(
        "--replace", action="store_true", help="with --message: truncate this session in place"
    )
    trunc = sub.add_parser("truncate", parents=[common], help="replace in place at a message")
    trunc.add_argument("id")
    trunc.add_argument("--message", required=True, metavar="MSG_ID")
    trunc.add_argument(
        "--exclude-message", action="store_true", help="also remove that message's turn"
    )
    imp = sub.add_parser("import", parents=[common], help="add session files in the on-disk format")
    imp.add_argument("files", nargs="+", type=Path)
    prompt = sub.add_parser(
        "prompt", parents=[common], help="run a turn; prints the reply or a pending approval id"
    )
    prompt.add_argument("id")
    prompt.add_argument("text")
    approve = sub.add_parser(
        "approve", parents=[common], help="answer a pending approval and continue the turn"
    )
    approve.add_argument("id")
    approve.add_argument("approval_id", metavar="APPROVAL_ID")
    approve.add_argument("--deny", action="store_true", help="refuse the tool call")
    return parser


def _connect_options(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--connect",
        metavar="ADDR",
        default=default,
        help="use the running host at unix:PATH or tcp:HOST:PORT instead of the store",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        default=default,
        help="file holding the host's token (tcp)",
    )


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))

    try:
        if args.command == "host" or wants_host(args):
            # only the commands that need a host pay for asyncio, the host and the RPC layer
            from . import cli_host

            if args.command == "host":
                return cli_host.run_host(args, out)
            result = _Result(*cli_host.run(args))
        else:
            try:
                result = _HANDLERS[args.action](args)
            except UseRunningHost as running:
                from . import cli_host

                args.connect, args.auto_connect = running.address, True
                result = _Result(*cli_host.run(args))
    except ForkwiseError as exc:
        if getattr(args, "json", False):
            out.write(
                orjson.dumps({"error": {"code": exc.code, "message": exc.message}}).decode() + "\n"
            )
        else:
            err.write(f"forkwise: {exc.message} ({exc.code})\n")
        return 1
    if args.json:
        out.write(orjson.dumps(result.data, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(result.text + ("\n" if result.text else ""))
    return 0


def wants_host(args: argparse.Namespace) -> bool:
    """Whether a `sessions` command goes through a host rather than the store directly."""
    if getattr(args, "connect", None):
        return True
    if args.action in ("prompt", "approve"):
        return True
    return args.action == "fork" and (
        args.at is not None or args.message is not None or args.exclude_message or args.replace
    )


class _Result:
    def __init__(self, data: Any, text: str) -> None:
        self.data = data
        self.text = text


class UseRunningHost(Exception):
    """The store is locked by a process that serves it: run the command through it."""

    def __init__(self, address: str) -> None:
        super().__init__(address)
        self.address = address


def _open_store(args: argparse.Namespace, write: bool) -> SessionStore:
    """Writers take the store's lock. A locked store sends the command to the process
    holding the lock (UseRunningHost) when it serves the store socket; else a writer waits
    a little for the lock and a reader reads without it, saying so on stderr."""
    root = resolve_store_dir(args.store)
    if not write and not root.exists():
        return SessionStore(JsonlBackend(root, writable=False))
    wait = shared_store.lock_wait(shared_store.WRITE_WAIT) if write else 0.0
    claimed = shared_store.claim(root, lambda: JsonlBackend(root, writable=True), wait)
    if isinstance(claimed, JsonlBackend):
        return SessionStore(claimed)
    if isinstance(claimed, str):
        raise UseRunningHost(claimed)
    message = shared_store.locked_message(root)
    if write:
        raise StoreLocked(f"{message}; nothing was changed, try again later", store=str(root))
    sys.stderr.write(f"forkwise: {message}; reading the store read-only\n")
    return SessionStore(JsonlBackend(root, writable=False))


def _with_store(
    write: bool,
) -> Callable[
    [Callable[[SessionStore, argparse.Namespace], _Result]], Callable[[argparse.Namespace], _Result]
]:
    def wrap(
        fn: Callable[[SessionStore, argparse.Namespace], _Result],
    ) -> Callable[[argparse.Namespace], _Result]:
        def run(args: argparse.Namespace) -> _Result:
            store = _open_store(args, write)
            try:
                return fn(store, args)
            finally:
                store.close()

        return run

    return wrap


def _terminal_progress(done: int, total: int) -> None:
    """A line on the terminal while summaries are rebuilt (large store, no index)."""
    if sys.stderr.isatty():
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rforkwise: indexing sessions {done:,}/{total:,}{end}")
        sys.stderr.flush()


@_with_store(write=False)
def _list(store: SessionStore, args: argparse.Namespace) -> _Result:
    from .providers.offline import summary_row  # the offline provider knows the default model

    rows = sorted(store.list(_terminal_progress), key=lambda s: s.updated, reverse=True)
    data = [summary_row(s) for s in rows]  # model: what the next turn runs on
    return _Result(data, _table(rows))


def _table(rows: Sequence[SessionSummary]) -> str:
    if not rows:
        return "no sessions"
    lines = [f"{'ID':<26} {'EVENTS':>6} {'MSGS':>5} {'UPDATED':<24} {'MODEL':<16} TITLE"]
    for s in rows:
        title = s.display_title if s.error is None else f"(unreadable: {s.error.get('message')})"
        mark = "* " if s.running else ""
        parent = f"  [from {s.parent_session}]" if s.parent_session else ""
        lines.append(
            f"{s.id:<26} {s.events:>6} {s.messages:>5} {s.updated:<24} {(s.model or '-'):<16} "
            f"{mark}{title}{parent}"
        )
    return "\n".join(lines)


@_with_store(write=False)
def _show(store: SessionStore, args: argparse.Namespace) -> _Result:
    session = store.get(args.id)
    data = {"header": session.header.to_record(), "events": [e.to_record() for e in session.events]}
    return _Result(data, session_text(session))


def session_text(session: Session) -> str:
    header = session.header
    lines = [f"session {header.id}  cwd={header.cwd or '-'}  parent={header.parent_session or '-'}"]
    for e in session.events:
        extra = " ".join(f"{k}={_short(v)}" for k, v in e.fields.items())
        lines.append(f"{e.seq:>6} {e.type:<18} {extra}")
    return "\n".join(lines)


def _short(value: object, limit: int = 60) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


@_with_store(write=True)
def _new(store: SessionStore, args: argparse.Namespace) -> _Result:
    cwd = args.cwd if args.cwd is not None else str(Path.cwd())
    session = store.create(args.session_id, cwd=cwd)
    if args.title:
        store.append(session.id, [{"type": "session/title", "title": args.title}])
    return _Result({"id": session.id}, session.id)


@_with_store(write=True)
def _fork(store: SessionStore, args: argparse.Namespace) -> _Result:
    if args.boundary is None:  # as the Fork button: the index may spare reading the log
        made = store.fork_at_last_turn(args.source, args.child)
        return _Result({"child": made.id, "seedLength": made.seed_length}, made.id)
    source = store.get(args.source)
    boundary = None if args.boundary == "end" else _parse_int(args.boundary)
    child = store.fork(source, boundary, args.child)
    data = {"child": child.id, "seedLength": child.header.seed_length}
    return _Result(data, child.id)


def _parse_int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise InvalidBoundary(f"boundary must be an integer or 'end', got {text!r}") from None


@_with_store(write=True)
def _truncate(store: SessionStore, args: argparse.Namespace) -> _Result:
    session = store.get(args.id)
    if open_turn_start(session.events, session.last_seq) is not None:
        raise SessionBusy(
            "this session has a turn still open; replace in place needs it closed",
            session_id=session.id,
        )
    through = message_boundary(session.events, args.message, not args.exclude_message, session.id)
    after = store.truncate(session, through)
    return _Result(
        {"id": after.id, "through_sequence": through, "events": after.last_seq},
        f"{after.id} now ends at seq {through}",
    )


@_with_store(write=True)
def _import(store: SessionStore, args: argparse.Namespace) -> _Result:
    """Validate every file first, so that a bad file means nothing is imported."""
    parsed: list[Session] = []
    seen: set[str] = set()
    for path in args.files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc.strerror}", path=str(path)) from exc
        loaded, _, tail = parse_log(data, str(path))
        if tail.torn is not None:
            raise CorruptLog(f"{path}: the last line is incomplete", path=str(path))
        sid = loaded.header.id
        if sid in seen or store.exists(sid):
            raise DuplicateSessionId(f"{path}: a session {sid!r} exists already", session_id=sid)
        seen.add(sid)
        parsed.append(Session(loaded.header, tuple(loaded.events), ""))
    done = [store.import_session(s.header, s.events).id for s in parsed]
    return _Result({"imported": done}, "\n".join(done))


_HANDLERS: dict[str, Callable[[argparse.Namespace], _Result]] = {
    "list": _list,
    "show": _show,
    "new": _new,
    "fork": _fork,
    "truncate": _truncate,
    "import": _import,
}


if __name__ == "__main__":
    sys.exit(main())

"""`forkwise sessions …`: the scriptable command-line contract.

Plain output is for people; `--json` output is for programs and stays stable. Errors are
one sentence on stderr and exit status 1 (with `--json`: `{"error": {code, message}}` on
stdout); usage errors exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, TextIO

import orjson

from forkwise.core.cli.commands import COMMANDS, Outcome, status
from forkwise.core.cli.connect import READERS, open_client
from forkwise.core.errors import ForkwiseError
from forkwise.core.log.event_log import gc_paused

SUBCOMMANDS = ("sessions", "host", "store")
#: options that take a value, so the value is not mistaken for the subcommand
_VALUE_OPTIONS = ("--store", "--connect", "--token-file")
#: one-shot commands whose process ends with them, whatever the store's size: they run
#: without the cyclic collector (see `main`)
_NO_CYCLE_COLLECTION = READERS | {"fork"}


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
        from forkwise.core import __version__

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
    store = top.add_parser("store", help="whole-store operations")
    store_sub = store.add_subparsers(dest="action", required=True, parser_class=_Parser)
    copy = store_sub.add_parser(
        "copy",
        help="copy every session of SRC into DST (folders or postgresql:// URLs; resumable)",
    )
    copy.add_argument("source", metavar="SRC")
    copy.add_argument("target", metavar="DST")
    copy.add_argument("--json", action="store_true", help="machine-readable output")
    sessions = top.add_parser(
        "sessions", help="list, show, create, fork, truncate, delete and import sessions"
    )
    sub = sessions.add_subparsers(dest="action", required=True, parser_class=_Parser)

    sub.add_parser("list", parents=[common], help="list sessions, newest activity first")
    show = sub.add_parser("show", parents=[common], help="show a session's header and events")
    show.add_argument("id")
    context = sub.add_parser(
        "context",
        parents=[common],
        help="print what the model would receive on the next prompt (the provider transcript)",
    )
    context.add_argument("id")
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
    imp = sub.add_parser(
        "import",
        parents=[common],
        help="import sessions of Claude Code, Codex, pi or Forkwise (files or folders)",
        description="Import session files, or folders searched for them. Without a PATH: "
        "the tools' default folders (~/.claude/projects, ~/.codex/sessions, "
        "~/.pi/agent/sessions). A second import of the same sources changes nothing; "
        "a source that grew is brought up to date.",
    )
    imp.add_argument(
        "--from",
        dest="tool",
        choices=("claude", "codex", "pi", "forkwise"),
        help="the tool whose sessions these are (default: recognised per file)",
    )
    imp.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    exp = sub.add_parser(
        "export",
        parents=[common],
        help="write a session as a Claude Code, Codex or pi session, to continue it there",
    )
    exp.add_argument("id")
    exp.add_argument("--to", dest="tool", required=True, choices=("claude", "codex", "pi"))
    exp.add_argument(
        "--out",
        metavar="PATH",
        help="the file to write (default: where the tool looks for its sessions)",
    )
    delete = sub.add_parser("delete", parents=[common], help="move a session to the store's trash")
    delete.add_argument("id")
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
    if args.command == "sessions" and args.action in _NO_CYCLE_COLLECTION:
        # what they allocate is kept until printed or freed by reference counting, and
        # the process ends after them: each pass of the cyclic collector would only walk
        # it (a 10,000-session listing: ~20 ms of ~220 ms CPU, 0 found); what is left
        # (the host's objects refer to each other) is collected at the next full pass
        with gc_paused():
            return _main(args, out, err)
    return _main(args, out, err)


def _main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        if args.command == "host":
            from forkwise.core.cli.serve import run_host

            return run_host(args, out)
        if args.command == "store":
            data, text = _store_copy(args, err)
        else:
            data, text = asyncio.run(_run(args))
    except ForkwiseError as exc:
        if getattr(args, "json", False):
            out.write(
                orjson.dumps({"error": {"code": exc.code, "message": exc.message}}).decode() + "\n"
            )
        else:
            err.write(f"forkwise: {exc.message} ({exc.code})\n")
        return 1
    if args.json:
        _write_json(out, data)
    else:
        shown = text() if callable(text) else text
        out.write(shown + ("\n" if shown else ""))
    if args.command == "store":
        return 1 if data["conflicts"] else 0
    return status(args.action, data)


def _store_copy(args: argparse.Namespace, err: TextIO) -> Outcome:
    """A store-to-store operation: not a verb of one store's host, so no client."""
    from forkwise.core.paths import store_label
    from forkwise.core.store.copy import copy_store

    def progress(done: int, total: int) -> None:
        if not args.json and (done % 500 == 0 or done == total):
            err.write(f"forkwise: {done}/{total} sessions\n")

    report = copy_store(args.source, args.target, progress)
    text = (
        f"{len(report.copied)} sessions copied ({report.events} events), "
        f"{len(report.skipped)} already in {store_label(args.target)}"
    )
    if report.conflicts:
        text += "; differ there, left as they are: " + ", ".join(report.conflicts)
    return report.to_dict(), text


def _write_json(out: TextIO, data: Any) -> None:
    """`data` as indented JSON; as bytes when `out` has a binary buffer (a context can be
    tens of MB: no detour through a str), a part at a time (`json_parts`)."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(b"".join(json_parts(data)).decode())
        return
    out.flush()
    for part in json_parts(data):
        buffer.write(part)
    buffer.flush()


_INDENT: Final = orjson.OPT_INDENT_2
#: items of a long list encoded at a time by `json_parts`
_PART_ITEMS: Final = 1000


def json_parts(data: Any) -> Iterator[bytes | memoryview]:
    """`orjson.dumps(data, option=OPT_INDENT_2 | OPT_APPEND_NEWLINE)`, byte for byte, in
    parts: a long list (the top-level one, or the last value of a top-level object: a
    listing's rows, a context's messages) is encoded `_PART_ITEMS` items at a time. Its
    items sit at the same depth in a part as in the whole, so each part's are its bytes
    less the brackets around them: the whole never exists at once (a 39 MB context:
    ~9,600 page faults and 12 of 21 ms less)."""
    whole = _INDENT | orjson.OPT_APPEND_NEWLINE
    if type(data) is list and len(data) > _PART_ITEMS:
        # "[\n" items "\n]": the items at depth 1
        yield b"[\n"
        yield from _items(data, lambda part: part, len(b"[\n"), len(b"\n]"))
        yield b"\n]\n"
        return
    if type(data) is dict and data:
        key, items = next(reversed(data.items()))
        if type(key) is str and type(items) is list and len(items) > _PART_ITEMS:
            # the object with a one-item list in its place shows where the items go: at
            # depth 2, as in an object holding only that list
            marker = orjson.dumps({**data, key: [0]}, option=_INDENT)
            head, found, tail = marker.rpartition(b"\n    0\n")
            if found:
                opening = b"{\n  " + orjson.dumps(key) + b": [\n"
                yield head + b"\n"
                yield from _items(
                    items, lambda part: {key: part}, len(opening), len(b"\n  ]\n}")
                )
                yield b"\n" + tail + b"\n"
                return
    yield orjson.dumps(data, option=whole)


def _items(
    items: list[Any], wrap: Callable[[list[Any]], Any], before: int, after: int
) -> Iterator[memoryview | bytes]:
    """The indented items of `items`, a part at a time, separated as in the whole: each
    part is `wrap(part)` encoded, less `before` and `after` bytes around its items."""
    for start in range(0, len(items), _PART_ITEMS):
        encoded = orjson.dumps(wrap(items[start : start + _PART_ITEMS]), option=_INDENT)
        if start:
            yield b",\n"
        yield memoryview(encoded)[before : len(encoded) - after]


async def _run(args: argparse.Namespace) -> Outcome:
    write = args.action not in READERS
    async with open_client(args.store, args.connect, args.token_file, write=write) as client:
        return await COMMANDS[args.action](client, args)


if __name__ == "__main__":
    sys.exit(main())

"""`forkwise sessions …`: the scriptable command-line contract.

Plain output is for people; `--json` output is for programs and stays stable. Errors are
one sentence on stderr and exit status 1 (with `--json`: `{"error": {code, message}}` on
stdout); usage errors exit 2.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

import orjson

from forkwise.core.errors import ForkwiseError
from forkwise.core.log.event_log import gc_paused

if TYPE_CHECKING:  # imported when a `sessions` command runs (`_sessions`)
    from forkwise.core.cli.commands import Outcome

SUBCOMMANDS = ("sessions", "host", "store")
#: the commands that only read the store
READERS = frozenset({"list", "show", "context"})
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


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, sized to the terminal when it formats: argparse makes
    one for each argument it adds (to check the argument's metavar), and sizing one
    imports shutil (~1.6 ms of CPU with the bz2 and lzma it imports), which a command
    line that asks for no help and makes no error never uses."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, 0 if width is None else width)
        self._sized = width is not None
        self._asked_position = max_help_position

    def format_help(self) -> str:
        if not self._sized:  # as argparse sizes it when no width is given
            import shutil

            width = shutil.get_terminal_size().columns - 2
            self._width = width
            self._max_help_position = min(
                self._asked_position, max(width - 20, self._indent_increment * 2)
            )
            self._sized = True
        return super().format_help()


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # usage errors: exit 2, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


class VersionAction(argparse.Action):
    """`--version`, looked up only when asked for (reading package metadata takes ~20 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from forkwise.core import __version__

        print(f"forkwise {__version__}")
        parser.exit()


#: adds a subcommand's arguments to its parser
_Fill = Callable[[argparse.ArgumentParser], None]


class _Subcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subcommands whose parsers are made when one is chosen, its arguments added by its
    `fill`: a command line runs one of them, and making the parsers and ~60 arguments of
    all (argparse looks up the translation of each of its words) takes longer than
    parsing (`sessions list`: ~4 ms of CPU). Each subcommand's name and help line are
    there from the start, so the help and the errors of the commands above it are as
    they were."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._make: Callable[..., argparse.ArgumentParser] = self._parser_class
        self._parser_class = _Deferred
        self._deferred: dict[str, tuple[_Deferred, _Fill]] = {}

    def add(self, name: str, fill: _Fill, **kwargs: Any) -> None:
        """A subcommand `name` (`kwargs` as for `add_parser`); `fill` adds its arguments
        to its parser once it is chosen."""
        made = self.add_parser(name, **kwargs)
        assert isinstance(made, _Deferred)
        self._deferred[name] = (made, fill)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        name = values[0] if values else None
        if isinstance(name, str) and name in self._deferred:
            deferred, fill = self._deferred.pop(name)
            chosen = self._make(**deferred.kwargs)
            fill(chosen)
            self.choices[name] = chosen
        super().__call__(parser, namespace, values, option_string)


class _Deferred:
    """A subcommand's parser still to be made: what `add_parser` would make it with."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


def _subcommands(parser: argparse.ArgumentParser, dest: str) -> _Subcommands:
    """`parser`'s subcommands. Their usage starts with `parser.prog`, given here: argparse
    would format the usage of `parser`'s positional arguments before them to find it
    (none here, so it is the prog at any width), sizing a formatter to the terminal."""
    subcommands = parser.add_subparsers(
        dest=dest, required=True, parser_class=_Parser, action=_Subcommands, prog=parser.prog
    )
    assert isinstance(subcommands, _Subcommands)
    return subcommands


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="forkwise", description="Browse and branch AI-agent sessions.")
    parser.add_argument(
        "--version", action=VersionAction, nargs=0, help="print the version and exit"
    )
    _connect_options(parser, None)  # given before it
    top = _subcommands(parser, "command")
    top.add("host", _host_arguments, help="serve the store to other processes (headless host)")
    top.add("store", _store_arguments, help="whole-store operations")
    top.add(
        "sessions",
        _sessions_arguments,
        help="list, show, create, fork, truncate, delete and import sessions",
    )
    return parser


def _host_arguments(host: argparse.ArgumentParser) -> None:
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


def _store_arguments(store: argparse.ArgumentParser) -> None:
    store_sub = _subcommands(store, "action")
    store_sub.add(
        "copy",
        _copy_arguments,
        help="copy every session of SRC into DST (folders or postgresql:// URLs; resumable)",
    )


def _copy_arguments(copy: argparse.ArgumentParser) -> None:
    copy.add_argument("source", metavar="SRC")
    copy.add_argument("target", metavar="DST")
    copy.add_argument("--json", action="store_true", help="machine-readable output")


def _common(parser: argparse.ArgumentParser) -> None:
    """The options every `sessions` action takes, given after it."""
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="store directory (default: $FORKWISE_STORE or the user data dir)",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    _connect_options(parser, argparse.SUPPRESS)  # given after the subcommand


def _with_id(parser: argparse.ArgumentParser) -> None:
    _common(parser)
    parser.add_argument("id")


def _sessions_arguments(sessions: argparse.ArgumentParser) -> None:
    sub = _subcommands(sessions, "action")
    sub.add("list", _common, help="list sessions, newest activity first")
    sub.add("show", _with_id, help="show a session's header and events")
    sub.add(
        "context",
        _with_id,
        help="print what the model would receive on the next prompt (the provider transcript)",
    )
    sub.add("new", _new_arguments, help="create an empty session; prints its id")
    sub.add("fork", _fork_arguments, help="fork a session into a new child")
    sub.add("truncate", _truncate_arguments, help="replace in place at a message")
    sub.add(
        "import",
        _import_arguments,
        help="import sessions of Claude Code, Codex, pi or Forkwise (files or folders)",
        description="Import session files, or folders searched for them. Without a PATH: "
        "the tools' default folders (~/.claude/projects, ~/.codex/sessions, "
        "~/.pi/agent/sessions). A second import of the same sources changes nothing; "
        "a source that grew is brought up to date.",
    )
    sub.add(
        "export",
        _export_arguments,
        help="write a session as a Claude Code, Codex or pi session, to continue it there",
    )
    sub.add("delete", _with_id, help="move a session to the store's trash")
    sub.add(
        "prompt",
        _prompt_arguments,
        help="run a turn; prints the reply or a pending approval id",
    )
    sub.add(
        "approve",
        _approve_arguments,
        help="answer a pending approval and continue the turn",
    )


def _new_arguments(new: argparse.ArgumentParser) -> None:
    _common(new)
    new.add_argument("--id", dest="session_id")
    new.add_argument("--title")
    new.add_argument(
        "--cwd", default=None, help="working directory recorded in the header (default: here)"
    )


def _fork_arguments(fork: argparse.ArgumentParser) -> None:
    _common(fork)
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


def _truncate_arguments(trunc: argparse.ArgumentParser) -> None:
    _with_id(trunc)
    trunc.add_argument("--message", required=True, metavar="MSG_ID")
    trunc.add_argument(
        "--exclude-message", action="store_true", help="also remove that message's turn"
    )


def _import_arguments(imp: argparse.ArgumentParser) -> None:
    _common(imp)
    imp.add_argument(
        "--from",
        dest="tool",
        choices=("claude", "codex", "pi", "forkwise"),
        help="the tool whose sessions these are (default: recognised per file)",
    )
    imp.add_argument("paths", nargs="*", type=Path, metavar="PATH")


def _export_arguments(exp: argparse.ArgumentParser) -> None:
    _with_id(exp)
    exp.add_argument("--to", dest="tool", required=True, choices=("claude", "codex", "pi"))
    exp.add_argument(
        "--out",
        metavar="PATH",
        help="the file to write (default: where the tool looks for its sessions)",
    )


def _prompt_arguments(prompt: argparse.ArgumentParser) -> None:
    _with_id(prompt)
    prompt.add_argument("text")


def _approve_arguments(approve: argparse.ArgumentParser) -> None:
    _with_id(approve)
    approve.add_argument("approval_id", metavar="APPROVAL_ID")
    approve.add_argument("--deny", action="store_true", help="refuse the tool call")


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
        _no_collection_at_exit()
        with gc_paused():
            return _main(args, out, err)
    return _main(args, out, err)


@functools.cache  # once a process
def _no_collection_at_exit() -> None:
    """The process of a one-shot command ends after it, and at its end the interpreter
    walks every object it made (most of them by its imports: classes, functions, module
    dicts, which refer to each other) in collection after collection, to free memory the
    process's exit frees anyway: ~13 of the ~19 ms of CPU a 10,000-session listing's
    process takes to end (`perf record` of the teardown: the collector's passes, half of
    it). Frozen at exit (`atexit`), they are left to the exit. A one-shot command leaves
    nothing to be finalized by a collection: its files, sockets, threads and event loop
    are closed before `main` returns."""
    atexit.register(gc.freeze)


def _main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        if args.command == "host":
            from forkwise.core.cli.serve import run_host

            return run_host(args, out)
        if args.command == "store":
            data, text = _store_copy(args, err)
        else:
            data, text = _sessions(args)
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
    from forkwise.core.cli.commands import status

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


def _sessions(args: argparse.Namespace) -> Outcome:
    """A `sessions` command over a client. What it runs on (the client, the host, asyncio)
    is imported here, once the command line is parsed: the one-shot commands that end
    their process run with the cyclic collector paused (`main`), and so do these imports
    (~7,000 new tracked objects, nothing to collect: ~2 ms of CPU less, each pass of the
    collector meanwhile would walk them and all imported before); a reader's asyncio
    comes without TLS (`_asyncio_without_tls`)."""
    if args.action in READERS:
        _asyncio_without_tls()
    import asyncio

    from forkwise.core.cli.commands import COMMANDS
    from forkwise.core.cli.connect import open_client

    async def run() -> Outcome:
        write = args.action not in READERS
        async with open_client(args.store, args.connect, args.token_file, write=write) as c:
            return await COMMANDS[args.action](c, args)

    return asyncio.run(run())


def _asyncio_without_tls() -> None:
    """Import asyncio as on a Python built without `ssl`, when nothing has imported either
    yet. A command that only reads the store makes no TLS connection (its host runs in
    this process or listens on a unix socket or plain tcp; a database's TLS is libpq's,
    in C), and asyncio imports ssl only to offer it: loading `_ssl` and OpenSSL is ~5 ms
    of the CPU of a 10,000-session listing's process (`-X importtime`, and `import
    asyncio` with and without ssl). asyncio is written for a Python without ssl
    (`try: import ssl except ImportError: ssl = None` in each of its modules that use it).
    `ssl` stays importable afterwards for anything else in the process; only asyncio's
    own TLS is off in it."""
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # `import ssl` raises ImportError
    try:
        import asyncio  # noqa: F401
    except ImportError:  # something asyncio imports needs ssl: imported as usual below
        pass
    finally:
        del sys.modules["ssl"]


if __name__ == "__main__":
    sys.exit(main())

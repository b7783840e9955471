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
from typing import TYPE_CHECKING, Any, Final, TextIO

import orjson

from forkwise.core.cli.parser import build_parser
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
#: commands that run no model step: no TLS connection in their process (see
#: `_asyncio_without_tls`)
_NO_TLS = READERS | {"fork", "truncate", "delete", "restore", "trash"}


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


#: a database password on the command line: said, not refused (scripts and services pass
#: URLs so), since every user of the machine reads it while the process runs
PASSWORD_IN_ARGV = (
    "forkwise: warning: a store URL on the command line holds a password, which every user "
    "of this machine can read (ps, /proc) while this runs; leave it out of the URL and put "
    "it in $PGPASSWORD, ~/.pgpass or the system keyring (service forkwise-postgres), or "
    "pass the URL in $FORKWISE_STORE\n"
)


def _main(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from forkwise.core.paths import has_password

    named = [getattr(args, k, None) for k in ("store", "source", "target")]
    if any(isinstance(url, str) and has_password(url) for url in named):
        err.write(PASSWORD_IN_ARGV)
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
    comes without TLS (`_asyncio_without_tls`), and so does a fork's, a cut's or a delete's."""
    if args.action in _NO_TLS:
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
    yet. A command that runs no model step (it reads, forks, cuts or deletes) makes no
    TLS connection (its host runs in this process or listens on a unix socket or plain
    tcp; a database's TLS is libpq's, in C; a provider is set up but never called), and
    asyncio imports ssl only to offer it: loading `_ssl` and OpenSSL is ~5 ms
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

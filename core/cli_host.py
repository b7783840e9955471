"""The CLI commands that need a host: `forkwise host`, `--connect`, prompt, approve, and
forks by the host's anchor rules (`--at`, `--message`).

With `--connect ADDR` every `sessions` command talks to that running host; without it,
these commands start an in-process host on `--store` for the length of the command — or,
when another process holds the store's writer lock and serves `<store>/host.sock`, talk to
that process (see `shared_store`).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, TextIO

from . import shared_store
from .carriers import serve
from .client import Client
from .errors import ForkwiseError, InvalidBoundary, RpcError, StorageError, StoreLocked
from .events import Event
from .host import Host
from .paths import resolve_store_dir
from .rpc import RpcServer
from .session import Session, SessionHeader, SessionSummary

Json = dict[str, Any]
Outcome = tuple[Any, str]


def run(args: argparse.Namespace) -> Outcome:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> Outcome:
    action = _ACTIONS.get(args.action)
    if action is None:
        raise direct_only(args, f"'sessions {args.action}'")
    async with _client(args) as client:
        return await action(client, args)


def read_token(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        token = Path(path).expanduser().read_text().strip()
    except OSError as exc:
        raise StorageError(f"cannot read the token file {path}: {exc.strerror}") from exc
    if not token:
        raise RpcError(f"the token file {path} is empty")
    return token


@asynccontextmanager
async def _client(args: argparse.Namespace) -> AsyncIterator[Client]:
    token = read_token(getattr(args, "token_file", None))
    if not getattr(args, "connect", None):
        root = resolve_store_dir(args.store)
        claimed = await asyncio.to_thread(
            shared_store.claim, root, lambda: Host.open(root), shared_store.lock_wait(
                shared_store.WRITE_WAIT)
        )
        if claimed is None:
            raise StoreLocked(
                shared_store.locked_message(root) + "; nothing was changed, try again later",
                store=str(root),
            )
        if isinstance(claimed, Host):
            try:
                problem = await claimed.apply_saved_settings()
                if problem:
                    sys.stderr.write(f"forkwise: {problem}\n")
                client = await Client.in_process(claimed)
                try:
                    yield client
                finally:
                    await client.close()
            finally:
                await claimed.close()
            return
        args.connect, args.auto_connect, token = claimed, True, None
    client = await Client.connect(args.connect, token)
    try:
        yield client
    finally:
        await client.close()


def direct_only(args: argparse.Namespace, what: str) -> RpcError:
    """The error for something a host does not offer over RPC."""
    if getattr(args, "auto_connect", False):
        return RpcError(
            f"{what} needs direct store access, but the store is in use by another Forkwise "
            f"process (it answers at {args.connect}); nothing was changed, try again once it "
            "has closed"
        )
    return RpcError(f"{what} needs direct store access, not --connect")


# --- sessions commands through a client -------------------------------------------


def summary_of(row: Json) -> SessionSummary:
    return SessionSummary.from_index({**row, "firstUserText": None})


async def _list(client: Client, args: argparse.Namespace) -> Outcome:
    from .cli import _table

    rows = sorted(await client.list_sessions(), key=lambda r: r["updated"], reverse=True)
    return rows, _table([summary_of(r) for r in rows])


async def _show(client: Client, args: argparse.Namespace) -> Outcome:
    from .cli import session_text

    info = await client.get_session(args.id)
    events = await client.events(args.id)
    session = Session(
        SessionHeader.from_record(info["header"]),
        tuple(Event.from_record(e) for e in events),
        "",
    )
    return {"header": info["header"], "events": events}, session_text(session)


async def _new(client: Client, args: argparse.Namespace) -> Outcome:
    if args.session_id:
        raise direct_only(args, "--id")
    cwd = args.cwd if args.cwd is not None else str(Path.cwd())
    summary = await client.create_session(args.title, cwd)
    return {"id": summary["id"]}, summary["id"]


async def _fork(client: Client, args: argparse.Namespace) -> Outcome:
    if args.boundary is not None or args.child is not None:
        raise direct_only(args, "--boundary or --child")
    if args.message is not None:
        summary = await client.fork_at_message(
            args.source, args.message, not args.exclude_message, args.replace
        )
        if args.replace:
            data = {"id": summary["id"], "through_sequence": summary["events"]}
            return data, f"{summary['id']} now ends at seq {summary['events']}"
    else:
        if args.exclude_message or args.replace:
            raise InvalidBoundary("--exclude-message and --replace need --message")
        summary = await client.fork(args.source, args.at)
    return {"child": summary["id"], "seedLength": summary["seedLength"]}, summary["id"]


async def _truncate(client: Client, args: argparse.Namespace) -> Outcome:
    summary = await client.fork_at_message(
        args.id, args.message, not args.exclude_message, replace=True
    )
    through = summary["events"]
    data = {"id": summary["id"], "through_sequence": through, "events": through}
    return data, f"{summary['id']} now ends at seq {through}"


async def _prompt(client: Client, args: argparse.Namespace) -> Outcome:
    return _turn_result(await client.prompt_and_wait(args.id, args.text))


async def _approve(client: Client, args: argparse.Namespace) -> Outcome:
    return _turn_result(await client.approve_and_wait(args.id, args.approval_id, not args.deny))


def _turn_result(outcome: Json) -> Outcome:
    status = outcome["status"]
    if status not in ("completed", "waiting"):  # "idle": the prompt never became a turn
        raise TurnDidNotComplete(outcome)
    if status == "waiting":
        lines = [
            f"{a['approval']}\twaiting for approval: {a['tool']} {a['args']}"
            for a in outcome["approvals"]
        ]
        return outcome, "\n".join(lines)
    return outcome, outcome.get("reply") or ""


class TurnDidNotComplete(ForkwiseError):
    """A turn the CLI ran ended failed, cancelled or interrupted."""

    code = "turn-not-completed"

    def __init__(self, outcome: Json) -> None:
        reason = outcome.get("error") or "no reason given"
        if outcome["status"] == "idle":
            message = "the prompt did not run: the host could not start its turn (see its log)"
        elif outcome.get("turn") is None:
            message = f"the prompt did not run: {reason}"
        else:
            message = f"the turn ended {outcome['status']}: {reason}"
        super().__init__(message, outcome=outcome)


_ACTIONS: dict[str, Callable[[Client, argparse.Namespace], Awaitable[Outcome]]] = {
    "list": _list,
    "show": _show,
    "new": _new,
    "fork": _fork,
    "truncate": _truncate,
    "prompt": _prompt,
    "approve": _approve,
}


# --- forkwise host ------------------------------------------------------------------


def run_host(args: argparse.Namespace, out: TextIO) -> int:
    return asyncio.run(_serve(args, out))


async def _serve(args: argparse.Namespace, out: TextIO) -> int:
    """Serve until SIGINT/SIGTERM; prints one `listening ADDR` line when ready.

    Besides `--listen`, the host serves its store socket (`<store>/host.sock`), where other
    `forkwise` processes on the same store find it."""
    token = read_token(args.token_file)
    root = resolve_store_dir(args.store)
    try:
        host = Host.open(root)
    except StoreLocked as exc:
        running = shared_store.host_listening(root)
        exc.message += f" (a host answers at {running})" if running else ""
        raise
    problem = await host.apply_saved_settings()
    if problem:
        sys.stderr.write(f"forkwise host: {problem}\n")
    rpc = RpcServer(host, token)
    endpoint: shared_store.StoreEndpoint | None = None
    try:
        server = await serve(rpc, args.listen, allow_remote=args.allow_remote)
        try:
            if str(server.address) != shared_store.store_address(root):
                endpoint = await shared_store.StoreEndpoint.start(host, root)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            out.write(f"forkwise host listening {server.address}\n")
            out.flush()
            await stop.wait()
            for sig in (signal.SIGINT, signal.SIGTERM):
                with suppress(ValueError, RuntimeError):
                    loop.remove_signal_handler(sig)
        finally:
            if endpoint is not None:
                await endpoint.close()
            await server.close()
    finally:
        await rpc.close()
        await host.close()
    sys.stderr.write("forkwise host stopped\n")
    return 0

"""JSON-RPC 2.0 over any carrier: requests in, responses and notifications out.

A carrier hands each decoded message to `RpcConnection.receive` and gives the connection
a `send` function for what goes back. Every request runs as its own task, so a long one
(`session.prompt` with `wait`) never holds up the others; responses carry their request
id. Errors cross as JSON-RPC errors whose `data` carries the stable core `code` and the
error's details; notifications are JSON-RPC notifications named by their `kind`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from forkwise.core.errors import ForkwiseError, RpcError, Unauthorized
from forkwise.core.host.host import Host
from forkwise.core.notifications import Notification
from forkwise.core.reading import DOCUMENTS

log = logging.getLogger(__name__)
Json = dict[str, Any]
Send = Callable[[Json], None]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
APP_ERROR: Final = -32000  # a ForkwiseError; error.data.code says which


class InvalidParams(RpcError):
    """The request's params do not fit the method."""


class _Params:
    """Typed access to a request's params; wrong types raise InvalidParams."""

    def __init__(self, raw: object) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InvalidParams("params must be an object")
        self.raw: Json = raw

    def _get(self, name: str, kinds: tuple[type, ...], default: Any, required: bool) -> Any:
        if name not in self.raw or self.raw[name] is None:
            if required:
                raise InvalidParams(f"missing parameter {name!r}", parameter=name)
            return default
        value = self.raw[name]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise InvalidParams(f"parameter {name!r} has the wrong type", parameter=name)
        return value

    def req(self, name: str) -> str:
        return str(self._get(name, (str,), None, True))

    def opt(self, name: str) -> str | None:
        value = self._get(name, (str,), None, False)
        return None if value is None else str(value)

    def opt_int(self, name: str, default: int | None = None) -> int | None:
        value = self._get(name, (int,), default, False)
        return None if value is None else int(value)

    def flag(self, name: str, default: bool) -> bool:
        return bool(self._get(name, (bool,), default, False))


Handler = Callable[["RpcConnection", _Params], Awaitable[Any]]


class RpcServer:
    """The method table over one host; each client connection is an RpcConnection."""

    def __init__(self, host: Host, token: str | None = None) -> None:
        self.host = host
        self.token = token
        self.connections: set[RpcConnection] = set()

    def connect(
        self,
        send: Send,
        *,
        trusted: bool,
        hangup: Callable[[], None] | None = None,
        remote: bool = False,
    ) -> RpcConnection:
        """A connection; `trusted` ones (in-process, a 0600 unix socket without a token
        configured) need no `host.hello` token; `remote` ones (over the network) are
        confined to what the host's user configured (confinement.py)."""
        conn = RpcConnection(self, send, trusted or self.token is None, hangup)
        conn.remote = remote
        self.connections.add(conn)
        return conn

    def check_token(self, offered: object) -> bool:
        if self.token is None:
            return True
        if not isinstance(offered, str):
            return False
        import hmac  # only a host that asks for a token compares one

        return hmac.compare_digest(offered.encode(), self.token.encode())

    async def close(self) -> None:
        for conn in list(self.connections):
            await conn.close()


class RpcConnection:
    def __init__(
        self,
        server: RpcServer,
        send: Send,
        authenticated: bool,
        hangup: Callable[[], None] | None,
    ) -> None:
        self.server = server
        self.host = server.host
        self._send = send
        self._hangup = hangup
        self.authenticated = authenticated
        #: a client over the network: confined (confinement.py)
        self.remote = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._unsubscribe: Callable[[], None] | None = None
        self.closed = False

    def send(self, message: Json) -> None:
        if not self.closed:
            self._send(message)

    def notify(self, note: Notification) -> None:
        self.send({"jsonrpc": "2.0", "method": note["kind"], "params": note})

    def receive(self, message: object) -> None:
        """Take one decoded message; its answer is sent when it is ready."""
        task = asyncio.get_running_loop().create_task(self._handle(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    async def room(self, limit: int) -> None:
        """Wait until fewer than `limit` of this connection's requests are running: a
        carrier stops reading from a client that floods it, instead of starting tasks
        without end."""
        while len(self._tasks) >= limit:
            await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)

    def reject(self, code: int, message: str, request_id: object = None) -> None:
        """Answer something that is not a request (undecodable, oversized) with an error."""
        self.send(_error(request_id, code, message, {"code": RpcError.code}))

    async def _handle(self, message: object) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.reject(INVALID_REQUEST, "not a JSON-RPC 2.0 request object")
            return
        request_id = message.get("id")
        method = message.get("method")
        if not isinstance(method, str):
            if "result" not in message and "error" not in message:  # responses are ignored
                self.reject(INVALID_REQUEST, "a request needs a method name", request_id)
            return
        # a notification (no id) gets no answer, not even an error (JSON-RPC 2.0 §4.1)
        answer = self.send if "id" in message else _drop
        try:
            handler = METHODS.get(method)
            if handler is None:
                answer(
                    _error(
                        request_id,
                        METHOD_NOT_FOUND,
                        f"no method {method!r}",
                        {"code": RpcError.code},
                    )
                )
                return
            if not self.authenticated and method != "host.hello":
                raise Unauthorized("say host.hello with the host's token first")
            result = await handler(self, _Params(message.get("params")))
        except InvalidParams as exc:
            answer(_error(request_id, INVALID_PARAMS, exc.message, _data(exc)))
            return
        except ForkwiseError as exc:
            answer(_error(request_id, APP_ERROR, exc.message, _data(exc)))
            if isinstance(exc, Unauthorized) and self._hangup is not None:
                self._hangup()
            return
        except Exception as exc:
            log.exception("rpc method %s failed", method)
            answer(
                _error(
                    request_id, INTERNAL_ERROR, f"internal error: {exc}", {"code": "internal-error"}
                )
            )
            return
        try:
            answer({"jsonrpc": "2.0", "id": request_id, "result": result})
        except ForkwiseError as exc:  # the result cannot be sent (text that is not UTF-8):
            answer(_error(request_id, APP_ERROR, exc.message, _data(exc)))  # say so, or
        except Exception as exc:  # the caller would wait for an answer that never comes
            log.exception("rpc method %s: its result cannot be sent", method)
            answer(_error(request_id, INTERNAL_ERROR, f"internal error: {exc}",
                          {"code": "internal-error"}))  # fmt: skip

    def subscribe(self) -> None:
        if self._unsubscribe is None:
            self._unsubscribe = self.host.subscribe(self.notify)

    def unsubscribe(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    async def close(self) -> None:
        self.closed = True
        self.unsubscribe()
        self.server.connections.discard(self)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _drop(message: Json) -> None:
    pass


def _data(exc: ForkwiseError) -> Json:
    return {"code": exc.code, "details": dict(exc.details)}


def _error(request_id: object, code: int, message: str, data: Json) -> Json:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message, "data": data},
    }


# --- the methods ------------------------------------------------------------------


async def _hello(conn: RpcConnection, p: _Params) -> Any:
    if not conn.authenticated:
        if not conn.server.check_token(p.raw.get("token")):
            raise Unauthorized("the host refused the token")
        conn.authenticated = True
    from forkwise.core import __version__  # package metadata is read on first use (~20 ms)

    return {"name": "forkwise", "version": __version__, "protocol": 1}


async def _subscribe(conn: RpcConnection, p: _Params) -> Any:
    conn.subscribe()
    return {"subscribed": True}


async def _unsubscribe(conn: RpcConnection, p: _Params) -> Any:
    conn.unsubscribe()
    return {"subscribed": False}


async def _fork_at(conn: RpcConnection, p: _Params) -> Any:
    """`session.forkAt {sessionId, boundary? | end? | atSeq? | messageId? (includeMessage?),
    childId?}`: every way of choosing a fork point, one policy (`host.forking`)."""
    from forkwise.core.host.forking import ForkAt

    at = ForkAt(
        boundary=p.opt_int("boundary"),
        end=p.flag("end", False),
        at_seq=p.opt_int("atSeq"),
        message_id=p.opt("messageId"),
        include_message=p.flag("includeMessage", True),
    )
    return await conn.host.fork_session(p.req("sessionId"), at, p.opt("childId"))


async def _save_settings(conn: RpcConnection, p: _Params) -> Any:
    values = p.raw.get("values")
    if not isinstance(values, dict):
        raise InvalidParams("parameter 'values' must be an object", parameter="values")
    return await conn.host.save_settings(values, p.opt("apiKey") or "", remote=conn.remote)


async def _save_vendor(conn: RpcConnection, p: _Params) -> Any:
    values = p.raw.get("values")
    if not isinstance(values, dict):
        raise InvalidParams("parameter 'values' must be an object", parameter="values")
    return await conn.host.save_vendor(
        p.req("vendor"), values, p.opt("apiKey") or "", remote=conn.remote
    )


async def _create(conn: RpcConnection, p: _Params) -> Any:
    title, cwd, workspace = p.opt("title"), p.opt("cwd"), p.opt("workspace")
    sid = p.opt("sessionId")
    if not conn.remote:
        return await conn.host.create_session(title, cwd, workspace, sid)
    if cwd is not None:
        from forkwise.core.host.confinement import refuse_path

        raise refuse_path("cwd", cwd)
    return await conn.host.create_remote_session(title, workspace, sid)


async def _approve(conn: RpcConnection, p: _Params) -> Any:
    sid = p.req("sessionId")
    approval, approved, wait = p.req("approvalId"), p.flag("approved", True), p.flag("wait", False)
    if conn.remote and approved:
        from forkwise.core.host.confinement import inside, refuse_approval

        cwd = await conn.host.working_folder(sid)
        if not inside(conn.host.remote_root, cwd):
            raise refuse_approval(sid, cwd)
    return await conn.host.approve(sid, approval, approved, wait)


async def _export(conn: RpcConnection, p: _Params) -> Any:
    out, tool = p.opt("out"), p.req("tool")
    if conn.remote and (out is not None or tool in DOCUMENTS):
        from forkwise.core.host.confinement import refuse_path

        # a document goes to the named file or the host's current folder: both are the
        # host user's files
        raise refuse_path("out", out if out is not None else f"{tool} document")
    return await conn.host.export(p.req("sessionId"), tool, out, p.flag("assets", False))


async def _watch_sources(conn: RpcConnection, p: _Params) -> Any:
    tools = p.raw.get("tools")
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise InvalidParams("parameter 'tools' must be a list of strings", parameter="tools")
    return await conn.host.watch_sources(tools)


async def _import(conn: RpcConnection, p: _Params) -> Any:
    paths = p.raw.get("paths")
    if not isinstance(paths, list) or not all(isinstance(x, str) for x in paths):
        raise InvalidParams("parameter 'paths' must be a list of strings", parameter="paths")
    if conn.remote and paths:
        from forkwise.core.host.confinement import refuse_path

        raise refuse_path("paths", paths[0])
    return await conn.host.import_sources(p.opt("tool"), paths)


METHODS: dict[str, Handler] = {
    "host.hello": _hello,
    "session.list": lambda c, p: c.host.list_sessions(p.flag("usage", False)),
    "session.usage": lambda c, p: c.host.usage(p.req("sessionId")),
    "session.get": lambda c, p: c.host.get_session(p.req("sessionId")),
    "session.messages": lambda c, p: c.host.messages(p.req("sessionId")),
    "session.context": lambda c, p: c.host.context(
        p.req("sessionId"), p.opt_int("after", 0) or 0, p.opt_int("maxBytes", 1 << 22) or 1
    ),
    "session.events": lambda c, p: c.host.events(
        p.req("sessionId"), p.opt_int("after", 0) or 0, p.opt_int("limit", 1000) or 1000
    ),
    "session.create": _create,
    "session.prompt": lambda c, p: c.host.prompt(
        p.req("sessionId"), p.req("text"), p.flag("wait", False)
    ),
    "session.cancel": lambda c, p: c.host.cancel(p.req("sessionId")),
    "session.approve": _approve,
    "session.fork": lambda c, p: c.host.fork(p.req("sessionId"), p.opt_int("atSeq")),
    "session.forkAtMessage": lambda c, p: c.host.fork_at_message(
        p.req("sessionId"),
        p.req("messageId"),
        p.flag("includeMessage", True),
        p.flag("replace", False),
    ),
    "session.forkAt": _fork_at,
    "session.truncate": lambda c, p: c.host.truncate(
        p.req("sessionId"), p.req("messageId"), p.flag("includeMessage", True)
    ),
    "session.delete": lambda c, p: c.host.delete_session(p.req("sessionId")),
    "session.restore": lambda c, p: c.host.restore_session(p.req("sessionId")),
    "trash.list": lambda c, p: c.host.list_trash(),
    "trash.empty": lambda c, p: c.host.empty_trash(p.opt("sessionId")),
    "session.search": lambda c, p: c.host.search(p.req("query"), p.opt_int("limit", 50) or 50),
    "session.import": _import,
    "sources.list": lambda c, p: c.host.list_sources(),
    "sources.watch": _watch_sources,
    "session.export": _export,
    "session.setModel": lambda c, p: c.host.set_model(
        p.req("sessionId"), p.req("provider"), p.req("model"), p.opt("reasoning")
    ),
    "session.rename": lambda c, p: c.host.rename_session(
        p.req("sessionId"), p.opt("title"), clear=p.flag("clear", False)
    ),
    "session.subscribe": _subscribe,
    "session.unsubscribe": _unsubscribe,
    "model.list": lambda c, p: _done(c.host.models()),
    "host.reloadSettings": lambda c, p: c.host.reload_settings(),
    "settings.get": lambda c, p: c.host.settings(),
    "settings.save": _save_settings,
    "settings.saveVendor": _save_vendor,
    "settings.clearKey": lambda c, p: c.host.clear_vendor_key(p.req("vendor")),
    "settings.listModels": lambda c, p: c.host.list_vendor_models(
        p.req("vendor"), p.opt("baseUrl") or "", p.opt("apiKey") or "", remote=c.remote
    ),
    "workspace.list": lambda c, p: c.host.list_workspaces(),
    "workspace.attach": lambda c, p: c.host.attach(p.req("workspace"), p.req("sessionId")),
}


async def _done(value: Any) -> Any:
    return value

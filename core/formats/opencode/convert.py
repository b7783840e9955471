"""One OpenCode session's messages as Forkwise events.

- A user message → turn/start + message (user) with its text parts; its `file`, `agent`,
  `subtask` and synthetic text parts → plugin/opencode/<type>.
- An assistant message → message (assistant): `reasoning` and `text` parts, `tool` parts
  as tool calls; a model other than the last → model/select first; then one tool/result
  per finished tool part (`error: true` when its state is `error`); its `cost` and
  `tokens` → plugin/opencode/usage; `step-start`, `step-finish`, `patch`, `snapshot`,
  `compaction`, `retry` … → plugin/opencode/<type>.
- A message or part whose data is not JSON → plugin/opencode/unreadable (its text, and
  for a message its readable parts), where it stands.
- A turn ends before the next user message: completed after a final answer, cancelled
  when the answer was aborted, failed after an error, else interrupted; a session still
  being written leaves an unfinished last turn open.

Message ids and turn ids are made from a `key` per message: a fork's copy of its
source's messages gets the source's keys, so the two carry equal records for what they
share. Every event's `src` names the OpenCode session and message it came from.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..base import UNREADABLE, Record, message_id
from .store import UNREADABLE_KEY, UNREADABLE_PART, Message

_TOOL_DONE = frozenset({"completed", "error"})
_ABORTED = frozenset({"MessageAbortedError"})


def iso_ms(ms: object) -> str:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    stamp = datetime.fromtimestamp(ms / 1000, UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(
        str(p.get("text", "")) for p in parts if p.get("type") == "text" and not p.get("synthetic")
    )


class Converter:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.out: list[Record] = []
        self.unmapped: dict[str, int] = {}
        self._turn: str | None = None
        self._last: Message | None = None
        self._model: tuple[str, str] | None = None
        self._ids: set[str] = set()
        self._ts = ""

    def _event(self, etype: str, msg: Message | None, ts: str = "", **fields: Any) -> None:
        record: Record = {"type": etype, "ts": ts or self._ts}
        if msg is not None:
            record["src"] = {"id": self.session_id, "lines": [], "message": msg.id}
        record.update(fields)
        self._ts = record["ts"]
        self.out.append(record)

    def _plugin(self, kind: str, msg: Message, ts: str, **fields: Any) -> None:
        self.unmapped[kind] = self.unmapped.get(kind, 0) + 1
        self._event(f"plugin/opencode/{kind}", msg, ts, **fields)

    def _mid(self, role: str, text: str, key: str) -> str:
        mid = message_id(role, text[:80], key)
        n = 1
        while mid in self._ids:
            n += 1
            mid = message_id(role, text[:80], f"{key}#{n}")
        self._ids.add(mid)
        return mid

    def close(self, live: bool = False) -> None:
        if self._turn is None:
            return
        status = _status(self._last)
        if status is None and live:
            return
        self._event("turn/end", None, turn=self._turn, status=status or "interrupted")
        self._turn = None

    def feed(self, messages: list[Message], keys: list[str]) -> None:
        for msg, key in zip(messages, keys, strict=True):
            ts = iso_ms(_dict(msg.data.get("time")).get("created")) or iso_ms(msg.created)
            if UNREADABLE_KEY in msg.data:
                parts = [_without_ids(p) for p in msg.parts]
                self._plugin(UNREADABLE, msg, ts, text=msg.data[UNREADABLE_KEY], parts=parts)
            elif msg.role == "user":
                self._user(msg, key, ts)
            elif msg.role == "assistant":
                self._assistant(msg, key, ts)
            else:
                self._plugin("message", msg, ts, message=msg.data, parts=msg.parts)

    def _open(self, msg: Message, key: str, ts: str) -> None:
        self._turn = f"turn:{key}"
        self._event("turn/start", msg, ts, turn=self._turn)

    def _user(self, msg: Message, key: str, ts: str) -> None:
        self.close()
        self._last = msg
        parts = [
            {"type": "text", "text": str(p.get("text", ""))}
            for p in msg.parts
            if p.get("type") == "text" and not p.get("synthetic")
        ]
        mid = self._mid("user", _text(msg.parts), key)
        self._open(msg, key, ts)
        self._event("message", msg, ts, id=mid, role="user", turn=self._turn, parts=parts)
        for part in msg.parts:
            kind = part.get("type")
            if kind == "text" and not part.get("synthetic"):
                continue
            self._part(msg, ts, mid, part)

    def _assistant(self, msg: Message, key: str, ts: str) -> None:
        if self._turn is None:
            self._open(msg, key, ts)
        self._last = msg
        data = msg.data
        provider, model = data.get("providerID"), data.get("modelID")
        if (
            isinstance(provider, str)
            and isinstance(model, str)
            and (provider, model) != self._model
        ):
            self._model = (provider, model)
            self._event("model/select", msg, ts, provider=provider, model=model)
        parts: list[dict[str, Any]] = []
        tools: list[dict[str, Any]] = []
        extras: list[dict[str, Any]] = []
        for part in msg.parts:
            kind = part.get("type")
            if kind == "text" and not part.get("synthetic"):
                parts.append({"type": "text", "text": str(part.get("text", ""))})
            elif kind == "reasoning":
                parts.append({"type": "reasoning", "text": str(part.get("text", ""))})
            elif kind == "tool":
                state = _dict(part.get("state"))
                args = state.get("input")
                parts.append(
                    {
                        "type": "tool_call",
                        "id": str(part.get("callID", "")),
                        "name": str(part.get("tool", "")),
                        "args": args if isinstance(args, dict) else {},
                    }
                )
                tools.append(part)
            else:
                extras.append(part)
        mid = self._mid("assistant", _text(msg.parts), key)
        self._event("message", msg, ts, id=mid, role="assistant", turn=self._turn, parts=parts)
        for part in extras:
            self._part(msg, ts, mid, part)
        if "tokens" in data or "cost" in data:
            self._plugin(
                "usage",
                msg,
                ts,
                message=mid,
                model=model,
                cost=data.get("cost"),
                tokens=data.get("tokens"),
            )
        for part in tools:
            state = _dict(part.get("state"))
            status = state.get("status")
            if status not in _TOOL_DONE:
                continue
            fields: dict[str, Any] = {
                "turn": self._turn,
                "call": str(part.get("callID", "")),
                "tool": str(part.get("tool", "")),
                "output": str(
                    state.get("output") if status == "completed" else state.get("error", "")
                ),
            }
            if status == "error":
                fields["error"] = True
            if state.get("title"):
                fields["title"] = state["title"]
            if state.get("metadata"):
                fields["metadata"] = state["metadata"]
            timing = _dict(state.get("time"))
            self._event("tool/result", msg, iso_ms(timing.get("end")) or ts, **fields)
        if isinstance(data.get("error"), dict):
            self._plugin("error", msg, ts, message=mid, error=data["error"])

    def _part(self, msg: Message, ts: str, mid: str, part: dict[str, Any]) -> None:
        """A part with no Forkwise equivalent, as plugin/opencode/<its type>."""
        kind = part.get("type")
        if kind == UNREADABLE_PART:
            self._plugin(UNREADABLE, msg, ts, message=mid, text=part.get("text", ""))
            return
        name = "synthetic" if kind == "text" else str(kind or "part")
        self._plugin(name, msg, ts, message=mid, part=_without_ids(part))


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _without_ids(part: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}


def _status(last: Message | None) -> str | None:
    if last is None or last.role != "assistant":
        return None
    data = last.data
    error = data.get("error")
    if isinstance(error, dict):
        return "cancelled" if error.get("name") in _ABORTED else "failed"
    timing = _dict(data.get("time"))
    if not timing.get("completed"):
        return None
    if data.get("finish") in ("tool-calls", "unknown"):
        return None
    return "completed"


def convert(session_id: str, messages: list[Message], keys: list[str], live: bool) -> Converter:
    converter = Converter(session_id)
    converter.feed(messages, keys)
    converter.close(live)
    return converter

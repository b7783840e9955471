"""One list of Gemini CLI messages as Forkwise events.

The events of a list depend only on its messages, so a rewound branch and the main line
carry equal records for the messages they share. What maps where:

- `user` → turn/start + message (user); a user message holding only function responses
  (Gemini CLI's history sync) gives tool/results in the open turn.
- `gemini` → message (assistant): its `thoughts` as reasoning parts, its text, its
  `toolCalls` as tool calls; then one tool/result per finished call (`error: true` when
  the call failed or was cancelled). A model other than the last → model/select first.
  `tokens` → plugin/gemini/usage (the record as Gemini CLI wrote it).
- `info` / `warning` / `error` → plugin/gemini/<type>; an `error` ending a turn fails it.
- A user message Gemini CLI adds itself (`<session_context>`, `<hook_context>`) →
  plugin/gemini/context, outside the turns.
- A turn ends before the next typed prompt: completed after an answer without tool calls,
  cancelled when a call was cancelled, failed after an error, else interrupted. A file
  still being written leaves an unfinished last turn open.
- Pictures (`inlineData`) → plugin/gemini/image; parts this reader does not know →
  plugin/gemini/part.
- A line that is not JSON → plugin/gemini/unreadable (its text), where it stands.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..base import UNREADABLE, Record, message_id
from .records import UNREADABLE_LINE, Msg

PROVIDER = "google"
#: user content Gemini CLI adds itself (the workspace it describes, hook output), not typed
CONTEXT_MARKS = ("<session_context>", "<hook_context>")
_FAILED_CALL = frozenset({"error", "cancelled"})
_DONE_CALL = frozenset({"success", "error", "cancelled"})


def parts_of(content: object) -> list[dict[str, Any]]:
    """Gemini's PartListUnion (a string, a part, or a list of either) as a list of parts."""
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [
            {"text": p} if isinstance(p, str) else p for p in content if isinstance(p, (str, dict))
        ]
    return []


def text_of(content: object) -> str:
    return "".join(
        p["text"]
        for p in parts_of(content)
        if isinstance(p.get("text"), str) and not p.get("thought")
    )


def result_text(result: object) -> str:
    """What a tool call's `result` says: its function responses' output (or error), and
    any text beside them."""
    out: list[str] = []
    for part in parts_of(result):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            if isinstance(body, dict):
                for key in ("output", "error", "content"):
                    if isinstance(body.get(key), str):
                        out.append(body[key])
                        break
                else:
                    out.append(orjson.dumps(body).decode())
            elif body is not None:
                out.append(str(body))
        elif isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(out)


class Converter:
    def __init__(self, source_id: str, start_ts: str) -> None:
        self.source_id = source_id
        self.out: list[Record] = []
        self.unmapped: dict[str, int] = {}
        self._turn: str | None = None
        self._turn_msgs: list[dict[str, Any]] = []
        self._model: str | None = None
        self._ids: set[str] = set()
        self._answered: set[str] = set()
        self._ts = start_ts

    # -- output -------------------------------------------------------------------------

    def _event(self, etype: str, msg: Msg | None, ts: str | None = None, **fields: Any) -> Record:
        record: Record = {"type": etype, "ts": ts or self._ts}
        if msg is not None:
            record["src"] = {"id": self.source_id, "lines": [msg.line]}
        record.update(fields)
        self._ts = record["ts"]
        self.out.append(record)
        return record

    def _plugin(self, kind: str, msg: Msg, **fields: Any) -> None:
        self.unmapped[kind] = self.unmapped.get(kind, 0) + 1
        self._event(f"plugin/gemini/{kind}", msg, _ts(msg.record, self._ts), **fields)

    def _mid(self, role: str, text: str, key: str) -> str:
        mid = message_id(role, text[:80], key)
        n = 1
        while mid in self._ids:
            n += 1
            mid = message_id(role, text[:80], f"{key}#{n}")
        self._ids.add(mid)
        return mid

    # -- turns --------------------------------------------------------------------------

    def _open(self, msg: Msg) -> None:
        self._turn = f"turn:{msg.id}"
        self._turn_msgs = []
        self._event("turn/start", msg, _ts(msg.record, self._ts), turn=self._turn)

    def close(self, live: bool = False) -> None:
        if self._turn is None:
            return
        status = _status(self._turn_msgs)
        if status is None and live:
            return  # still being answered
        self._event("turn/end", None, turn=self._turn, status=status or "interrupted")
        self._turn = None

    # -- messages -----------------------------------------------------------------------

    def feed(self, messages: list[Msg]) -> None:
        for msg in messages:
            record = msg.record
            kind = record.get("type")
            if kind == "user":
                self._user(msg)
            elif kind == "gemini":
                self._gemini(msg)
            elif kind == UNREADABLE_LINE:
                self._plugin(UNREADABLE, msg, text=record["text"])
            else:
                if self._turn is not None:
                    self._turn_msgs.append(record)
                name = kind if kind in ("info", "warning", "error") else "message"
                fields = {k: v for k, v in record.items() if k not in ("timestamp", "type")}
                self._plugin(name, msg, **fields)

    def _user(self, msg: Msg) -> None:
        parts = parts_of(msg.record.get("content"))
        responses = [
            p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)
        ]
        if parts and len(responses) == len(parts):
            if self._turn is None:
                self._open(msg)
            for response in responses:
                call = str(response.get("id") or response.get("name") or "")
                if call in self._answered:
                    continue
                self._answered.add(call)
                self._event(
                    "tool/result",
                    msg,
                    _ts(msg.record, self._ts),
                    turn=self._turn,
                    call=call,
                    tool=str(response.get("name", "")),
                    output=result_text([{"functionResponse": response}]),
                    native=msg.id,
                )
            return
        if text_of(msg.record.get("content")).lstrip().startswith(CONTEXT_MARKS):
            kept = {k: v for k, v in msg.record.items() if k not in ("timestamp", "type")}
            self._plugin("context", msg, **kept)
            return
        self.close()
        self._open(msg)
        self._turn_msgs.append(msg.record)
        text_parts: list[dict[str, Any]] = []
        extras: list[tuple[int, dict[str, Any]]] = []
        for index, part in enumerate(parts):
            if isinstance(part.get("text"), str):
                text_parts.append({"type": "text", "text": part["text"]})
            else:
                extras.append((index, part))
        mid = self._mid("user", text_of(msg.record.get("content")), msg.id)
        fields: dict[str, Any] = {
            "id": mid,
            "role": "user",
            "turn": self._turn,
            "parts": text_parts,
            "native": msg.id,
        }
        if msg.record.get("displayContent") is not None:
            fields["displayContent"] = msg.record["displayContent"]
        self._event("message", msg, _ts(msg.record, self._ts), **fields)
        self._extras(msg, mid, extras)

    def _gemini(self, msg: Msg) -> None:
        record = msg.record
        ts = _ts(record, self._ts)
        if self._turn is None:
            self._open(msg)
        self._turn_msgs.append(record)
        model = record.get("model")
        if isinstance(model, str) and model and model != self._model:
            self._model = model
            self._event("model/select", msg, ts, provider=PROVIDER, model=model)
        parts: list[dict[str, Any]] = []
        for thought in record.get("thoughts") or ():
            if isinstance(thought, dict):
                subject, body = thought.get("subject") or "", thought.get("description") or ""
                text = f"**{subject}**\n\n{body}" if subject and body else str(subject or body)
                parts.append({"type": "reasoning", "text": text})
        extras: list[tuple[int, dict[str, Any]]] = []
        for index, part in enumerate(parts_of(record.get("content"))):
            if isinstance(part.get("text"), str):
                if part["text"]:  # a message of tool calls only has "" as its content
                    kind = "reasoning" if part.get("thought") else "text"
                    parts.append({"type": kind, "text": part["text"]})
            else:
                extras.append((index, part))
        calls = [c for c in record.get("toolCalls") or () if isinstance(c, dict)]
        for call in calls:
            args = call.get("args")
            parts.append(
                {
                    "type": "tool_call",
                    "id": str(call.get("id", "")),
                    "name": str(call.get("name", "")),
                    "args": args if isinstance(args, dict) else {},
                }
            )
        mid = self._mid("assistant", text_of(record.get("content")), msg.id)
        self._event(
            "message",
            msg,
            ts,
            id=mid,
            role="assistant",
            turn=self._turn,
            parts=parts,
            native=msg.id,
        )
        self._extras(msg, mid, extras)
        if isinstance(record.get("tokens"), dict):
            self._plugin("usage", msg, message=mid, model=model, tokens=record["tokens"])
        for call in calls:
            status = call.get("status")
            if status not in _DONE_CALL and call.get("result") is None:
                continue
            call_id = str(call.get("id", ""))
            self._answered.add(call_id)
            fields: dict[str, Any] = {
                "turn": self._turn,
                "call": call_id,
                "tool": str(call.get("name", "")),
                "output": result_text(call.get("result")),
            }
            if status in _FAILED_CALL:
                fields["error"] = True
            if isinstance(status, str):
                fields["status"] = status
            if call.get("resultDisplay") is not None:
                fields["display"] = call["resultDisplay"]
            self._event("tool/result", msg, _ts(call, ts), **fields)

    def _extras(self, msg: Msg, mid: str, extras: list[tuple[int, dict[str, Any]]]) -> None:
        for index, part in extras:
            inline = part.get("inlineData")
            if isinstance(inline, dict):
                self._plugin(
                    "image",
                    msg,
                    message=mid,
                    index=index,
                    mimeType=inline.get("mimeType"),
                    data=inline.get("data"),
                )
            else:
                self._plugin("part", msg, message=mid, index=index, part=part)


def resumable(record: dict[str, Any]) -> bool:
    """Whether Gemini CLI counts the message as conversation (it lists a session only when
    one is): a prompt not empty, not a command and not its own context; an answer with
    text, tool calls or thoughts."""
    kind = record.get("type")
    if kind == "user":
        text = text_of(record.get("content")).strip()
        return bool(text) and not text.startswith(("/", "?", *CONTEXT_MARKS))
    if kind == "gemini":
        return bool(
            text_of(record.get("content")).strip()
            or record.get("toolCalls")
            or record.get("thoughts")
        )
    return False


def _ts(record: dict[str, Any], default: str) -> str:
    value = record.get("timestamp")
    return value if isinstance(value, str) and value else default


def _status(messages: list[dict[str, Any]]) -> str | None:
    """How a turn ended, from its messages; None when it has no final answer yet."""
    for record in reversed(messages):
        kind = record.get("type")
        if kind == "error":
            return "failed"
        if kind != "gemini":
            if kind == "user":
                return None
            continue
        calls = [c for c in record.get("toolCalls") or () if isinstance(c, dict)]
        if any(c.get("status") == "cancelled" for c in calls):
            return "cancelled"
        return None if calls else "completed"
    return None


def convert(source_id: str, start_ts: str, messages: list[Msg], live: bool) -> Converter:
    converter = Converter(source_id, start_ts)
    converter.feed(messages)
    converter.close(live)
    return converter

"""Forkwise events from the entries of one line of a Claude Code transcript.

One assistant reply is written as several entries sharing `message.id` (one per content
block); they become one message whose `src` names every entry, with a `usage` event after
it (`forkwise.core.log.usage`: the reply's tokens counted once, `message.usage` kept as
`raw`). Tool results arrive as `tool_result` blocks in user entries and become
`tool/result` events paired by `tool_use_id` (`toolUseResult` kept as `detail`). A turn
starts at a typed prompt; meta entries, tool-result entries, interruption markers and
compaction summaries start none. A compaction (`compact_boundary` and the summary entry
after it) becomes one `context/summary` event (`context/compaction` when the summary is
missing); both carry `trigger` and `preTokens`. Titles: `custom-title` > `summary` >
`ai-title` > the first prompt; a title entry ranked below one already seen stays a plugin
event, the same title written again joins the first one's `src`. The tool's bookkeeping
entries (chosen by the reader) join the `src` of the event of the entry they belong to.
Everything else is `plugin/claude/<kind>` with the entry minus its lineage fields; plugin
events that follow the reply ending a turn are placed after its `turn/end`, so that a branch
leaving there shares the whole turn with the line it left.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from forkwise.core.log.usage import anthropic_tokens, usage_draft

from ..base import UNREADABLE, Record, message_id
from .tree import INTERRUPT_PREFIX, UNREADABLE_ENTRY, Entry, Transcript, prompt_text

PROVIDER = "anthropic"
#: lineage and identity fields that differ between copies of one entry in two files
_LINEAGE = frozenset(
    {
        "sessionId",
        "parentUuid",
        "logicalParentUuid",
        "isSidechain",
        "forkedFrom",
        "requestSessionId",
        "sessionKind",
    }
)
#: how much of a message's text its id's slug is made from (the first words)
_SLUG_TEXT = 200
#: plugin events may sit between turns (the usage of a reply stays with it)
_HELD = "plugin/claude/"
_TITLE_RANK = {"ai-title": 1, "summary": 2, "custom-title": 3}
TITLE_KINDS = frozenset(_TITLE_RANK)
_TITLE_FIELD = {"ai-title": "aiTitle", "summary": "summary", "custom-title": "customTitle"}


def _plain(entry: Entry) -> Entry:
    return {k: v for k, v in entry.items() if k not in _LINEAGE}


def short_title(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 100 else flat[:99].rstrip() + "…"


class Builder:
    """Folds the entries of one line, in file order, into Forkwise events."""

    def __init__(self, t: Transcript, source_id: str, live: bool, tools: dict[str, str]) -> None:
        self.t = t
        self.tools = tools
        self.source_id = source_id
        self.live = live
        self.events: list[Record] = []
        self.unmapped: dict[str, int] = {}
        self.title: str | None = None
        self._rank = -1
        self._ts = next(
            (str(e["timestamp"]) for e in t.entries if type(e.get("timestamp")) is str), ""
        )
        self._turn: str | None = None
        self._cancelled = False
        self._pending: set[str] = set()
        self._last_said = False  # the assistant had the last word, with no call open
        self._replies: dict[str, Record] = {}  # message.id -> message of this turn
        self._usage: dict[str, Record] = {}
        self._model: str | None = None
        self._boundary: tuple[int, Entry] | None = None
        self._carry: list[int] = []  # bookkeeping lines waiting for an event to join
        self._held: list[Record] = []  # plugin events after the reply that ended a turn
        self._made: list[Record] = []  # the events made from the entry being fed

    # --- helpers -------------------------------------------------------------------

    def _src(self, *idx: int) -> dict[str, Any]:
        return {"id": self.source_id, "lines": [self.t.lines[i] for i in idx]}

    def _emit(self, record: Record, idx: Iterable[int] | None) -> Record:
        record["ts"] = self._ts
        if idx is not None:
            lines = self.t.lines
            record["src"] = {"id": self.source_id, "lines": [lines[i] for i in idx]}
        self._made.append(record)
        if self._last_said and self._turn is not None and not self._pending:  # _settled()
            kind = record["type"]
            held = kind == "session/title" or kind.startswith(_HELD)
        else:
            held = False
        if held:
            # after the reply that ended the turn: these belong between the turns, so
            # that a branch leaving here shares the whole turn with the line it left
            self._held.append(record)
            return record
        if self._held:
            self.events.extend(self._held)
            self._held.clear()
        self.events.append(record)
        return record

    def _key(self, idx: int, entry: Entry) -> str:
        """What an entry's ids are made from: its uuid, or its line for an entry without
        one (two such entries in a damaged file must not get one message id)."""
        uuid = entry.get("uuid")
        return uuid if type(uuid) is str else f"line-{self.t.lines[idx]}"

    def _settled(self) -> bool:
        return self._turn is not None and self._last_said and not self._pending

    def _plugin(self, kind: str, idx: int, **fields: Any) -> None:
        self.unmapped[kind] = self.unmapped.get(kind, 0) + 1
        self._emit({"type": f"plugin/claude/{kind}", **fields}, (idx,))

    def _open(self, key: str) -> str:
        if self._turn is None:
            self._turn = f"turn:{key}"
            self._emit({"type": "turn/start", "turn": self._turn}, None)
            self._cancelled = False
            self._pending.clear()
            self._last_said = False
            self._replies.clear()
        return self._turn

    def _close(self, status: str) -> None:
        if self._turn is not None:
            turn = self._turn
            ts, self._ts = self._ts, self.events[-1]["ts"]
            held, self._held = self._held, []
            self._turn = None
            self._emit({"type": "turn/end", "turn": turn, "status": status}, None)
            self.events.extend(held)
            self._ts = ts

    def _set_title(self, title: str, rank: int, idx: int | None) -> bool:
        if rank < self._rank or not title:
            return False
        if title == self.title and idx is not None and self.events and "src" in self.events[-1]:
            # the same title written again (Claude Code 2.1 repeats it after each turn)
            self._rank = rank
            self.events[-1]["src"]["lines"].append(self.t.lines[idx])
            return True
        self._rank = rank
        self.title = title
        self._emit({"type": "session/title", "title": title}, None if idx is None else (idx,))
        return True

    # --- entries -------------------------------------------------------------------

    def feed(self, idx: int, extra: list[int]) -> None:
        """One entry; `extra` are lines folded into its first event's `src`."""
        entry = self.t.entries[idx]
        ts = entry.get("timestamp")
        if type(ts) is str:
            self._ts = ts
        kind = entry.get("type")
        if type(kind) is not str:
            kind = "entry"
        self._made.clear()
        if self._boundary is not None and not entry.get("isCompactSummary"):
            self._flush_boundary()
        if kind == "user":
            self._user(idx, entry)
        elif kind == "assistant":
            self._assistant(idx, entry)
        elif kind == "system" and entry.get("subtype") == "compact_boundary":
            self._boundary = (idx, entry)
        elif kind in _TITLE_RANK:
            title = entry.get(_TITLE_FIELD[kind])
            if not (isinstance(title, str) and self._set_title(title, _TITLE_RANK[kind], idx)):
                self._plugin(str(kind), idx, entry=_plain(entry))
        elif kind == UNREADABLE_ENTRY:
            self._plugin(UNREADABLE, idx, text=entry["text"])
        else:
            self._plugin(str(kind or "entry"), idx, entry=_plain(entry))
        if extra or self._carry:
            extra = self._carry + extra
            self._carry = []
            for record in self._made:
                if "src" in record:
                    record["src"]["lines"].extend(self.t.lines[i] for i in extra)
                    break
            else:
                self._carry = extra  # nothing made yet (a compaction boundary): the next one
                return
            for i in extra:
                kind = str(self.t.entries[i].get("type"))
                self.unmapped[kind] = self.unmapped.get(kind, 0) + 1

    def _flush_boundary(self, summary: tuple[int, Entry] | None = None) -> None:
        assert self._boundary is not None
        bidx, boundary = self._boundary
        self._boundary = None
        meta = boundary.get("compactMetadata")
        record: Record = {"type": "context/summary" if summary else "context/compaction"}
        if isinstance(meta, dict):
            record["trigger"] = meta.get("trigger")
            record["preTokens"] = meta.get("preTokens")
        if summary is None:
            self._emit(record, (bidx,))
            return
        record["text"] = _text_of(summary[1])
        self._emit(record, (bidx, summary[0]))

    def _user(self, idx: int, entry: Entry) -> None:
        uuid = self._key(idx, entry)
        if entry.get("isCompactSummary"):
            if self._boundary is not None:
                self._flush_boundary((idx, entry))
            else:
                self._emit({"type": "context/summary", "text": _text_of(entry)}, (idx,))
            return
        if entry.get("isMeta"):
            self._plugin("meta", idx, entry=_plain(entry))
            return
        text = prompt_text(entry)
        if text is not None:
            self._prompt(idx, entry, uuid, text)
            return
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list | str):
            self._plugin("user", idx, entry=_plain(entry))
            return
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        said: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                self._result(idx, entry, block, uuid)
            elif btype == "text" and str(block.get("text", "")).startswith(INTERRUPT_PREFIX):
                self._cancelled = True
                self._plugin("interrupt", idx, text=block.get("text"))
            elif btype == "text":
                said.append({"type": "text", "text": str(block.get("text", ""))})
            else:
                self._plugin(str(btype or "block"), idx, block=block)
        if said:
            turn = self._open(uuid)
            said_text = "".join(str(p["text"]) for p in said)
            mid = message_id("user", said_text[:_SLUG_TEXT], uuid)
            self._emit(
                {"type": "message", "id": mid, "role": "user", "turn": turn, "parts": said},
                (idx,),
            )

    def _prompt(self, idx: int, entry: Entry, uuid: str, text: str) -> None:
        if self._turn is not None:
            self._close("cancelled" if self._cancelled else "completed")
        if self.title is None:
            self._set_title(short_title(text), 0, None)
        turn = self._open(uuid)
        self.events[-1]["src"] = self._src(idx)
        parts: list[dict[str, Any]] = []
        images: list[Any] = []
        content = entry["message"]["content"]
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        else:
            for block in content:
                if isinstance(block, dict) and block.get("type") == "text":
                    parts.append({"type": "text", "text": str(block.get("text", ""))})
                else:
                    images.append(block)
        mid = message_id("user", text[:_SLUG_TEXT], uuid)
        self._emit(
            {"type": "message", "id": mid, "role": "user", "turn": turn, "parts": parts},
            (idx,),
        )
        for block in images:
            kind = block.get("type") if isinstance(block, dict) else None
            self._plugin(str(kind or "block"), idx, block=block)

    def _result(self, idx: int, entry: Entry, block: dict[str, Any], uuid: str) -> None:
        call = str(block.get("tool_use_id", ""))
        turn = self._open(uuid)
        output = block.get("content")
        if isinstance(output, list) and all(
            isinstance(b, dict) and b.get("type") == "text" for b in output
        ):
            output = "\n".join(str(b.get("text", "")) for b in output)
        record: Record = {
            "type": "tool/result",
            "turn": turn,
            "call": call,
            "tool": self.tools.get(call, "unknown"),
            "output": output,
        }
        if block.get("is_error"):
            record["error"] = True
        detail = entry.get("toolUseResult")
        if detail is not None:
            record["detail"] = detail
        self._emit(record, (idx,))
        self._pending.discard(call)
        self._last_said = False

    def _assistant(self, idx: int, entry: Entry) -> None:
        message = entry.get("message")
        if not isinstance(message, dict):
            self._plugin("assistant", idx, entry=_plain(entry))
            return
        uuid = self._key(idx, entry)
        model = message.get("model")
        if isinstance(model, str) and model not in ("<synthetic>", self._model):
            self._model = model
            self._emit({"type": "model/select", "provider": PROVIDER, "model": model}, (idx,))
        turn = self._turn if self._turn is not None else self._open(uuid)
        key = message.get("id")
        reply = self._replies.get(key) if isinstance(key, str) else None
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        line = self.t.lines[idx]
        fresh = reply is None
        if reply is None:
            reply = {"type": "message", "id": "", "role": "assistant", "turn": turn, "parts": []}
            self._emit(reply, None)
            reply["src"] = {"id": self.source_id, "lines": [line]}
            if isinstance(key, str):
                self._replies[key] = reply
        else:
            reply["src"]["lines"].append(line)
        parts: list[dict[str, Any]] = reply["parts"]
        for block in blocks:
            if type(block) is not dict and not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text", "")
                parts.append({"type": "text", "text": text if type(text) is str else str(text)})
                self._last_said = True
            elif btype == "thinking":
                part = {"type": "reasoning", "text": str(block.get("thinking", ""))}
                if block.get("signature"):
                    part["signature"] = block["signature"]
                parts.append(part)
            elif btype == "tool_use":
                call = str(block.get("id", ""))
                name = str(block.get("name", ""))
                args = block.get("input")
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call,
                        "name": name,
                        "args": args if isinstance(args, dict) else {"input": args},
                    }
                )
                self._pending.add(call)
            else:
                self._plugin(str(btype or "block").replace("_", "-"), idx, block=block)
        if fresh:
            first = next((str(p["text"]) for p in parts if p["type"] == "text"), "")
            reply["id"] = message_id("assistant", first[:_SLUG_TEXT], uuid)
        usage = message.get("usage")
        if isinstance(usage, dict) and isinstance(key, str):
            # once per reply (message.id), though each of its lines repeats the usage: the
            # last line's, which Claude Code writes when the reply is complete
            held = self._usage.get(key)
            counted = anthropic_tokens(usage)
            if held is None:
                record = usage_draft(
                    model if isinstance(model, str) else "",
                    counted,
                    provider=PROVIDER,
                    message=key,
                    raw=usage,
                    turn=turn,
                )
                self._usage[key] = self._emit(record, (idx,))
            else:
                held.update(counted)
                held["raw"] = usage
                held["src"]["lines"].append(line)
        if message.get("stop_reason") == "end_turn":
            self._last_said = not self._pending

    def replayed(self, part: list[int]) -> None:
        """Entries that repeat the line's prompts under new uuids (kept, not shown)."""
        self._plugin("replayed", part[0], uuids=[self.t.entries[i].get("uuid") for i in part])
        self.events[-1]["src"] = self._src(*part)

    def finish(self) -> list[Record]:
        if self._boundary is not None:
            self._flush_boundary()
        for i in self._carry:
            entry = self.t.entries[i]
            self._plugin(str(entry.get("type") or "entry"), i, entry=_plain(entry))
        if self._turn is not None:
            if self._cancelled:
                self._close("cancelled")
            elif self._last_said and not self._pending:
                self._close("completed")
            elif not self.live:
                self._close("interrupted")
        self.events.extend(self._held)
        self._held.clear()
        return self.events


def _text_of(entry: Entry) -> str:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""

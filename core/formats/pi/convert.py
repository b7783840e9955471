"""One path of a pi session tree as Forkwise events.

The events of a path depend only on the entries of that path, root first, so two sessions
read from one tree (or a fork file repeating its parent's entries) carry equal records for
the entries they share. What maps where:

- `message` user → turn/start + message (user); assistant → message (text, reasoning,
  tool calls); toolResult → tool/result (`error: true` when pi says isError). The turn
  ends after the last message before the next user message; its status is the last
  assistant's stopReason: stop/length → completed, aborted → cancelled, error → failed;
  toolUse (the loop never answered) or no answer at all → interrupted.
- `message` bashExecution (a `!cmd` typed in pi) → a turn of its own: the typed command as
  the user message, an assistant message calling tool `bash` {command}, its output as the
  tool/result (error when it exited non-zero or was cancelled).
- `model_change`, `thinking_level_change`, or an assistant answering with another model →
  model/select (the reasoning is pi's thinking level; "off" is left out).
- `session_info` with a name → session/title. `compaction` → context/summary (`text`,
  `through` = the seq just before the first kept entry when events are stored in this
  order, `firstKeptEntryId`, `tokensBefore`); `branch_summary` → context/branch-summary.
- Kept fields: assistant messages keep pi's `usage` (tokens and cost), `stopReason` and
  `errorMessage`; tool results keep pi's `details`; signatures stay on their part.
- Plugin events (`plugin/pi/<kind>`, the entry's own fields minus type and timestamp):
  `custom`, `custom_message` (also v2 `hookMessage`), `label`, `session_info` without a
  name, `thinking_level_change` before any model is known, `image` (a picture in a user
  message or tool result: `message`/`call`, `index`, `mimeType`, `data`),
  `redacted_thinking`, `message` (a role pi does not persist normally), and any entry type
  this reader does not know, under its own name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ..base import Record, message_id
from .content import assistant_parts, entry_fields, first_text, plugin_kind, user_content
from .entries import Entry

#: stopReason → turn/end status (toolUse means more was to come)
_STATUS = {"stop": "completed", "length": "completed", "aborted": "cancelled", "error": "failed"}
TURN_OPENERS = frozenset({"user", "bashExecution"})


class PathConverter:
    """Turns one path (root → leaf) into events.

    A branch shares its parent's path up to where it leaves it: a `mark()` taken just before
    a turn-opening entry of the shared part carries on with the branch's own entries, so a
    tree is converted about once, not once per leaf. (Only a turn's opening looks ahead,
    and never past the next opening entry, so the state before an opening entry depends
    on the shared entries alone.)"""

    def __init__(self, source_id: str, start_ts: str = "") -> None:
        self.source_id = source_id
        self.out: list[Record] = []
        self.unmapped: dict[str, int] = {}
        self.title: str | None = None
        self._first: dict[str, int] = {}  # entry id → index of its first event in out
        self._pending: list[tuple[str, Record]] = []  # standalone events inside a turn
        self._turn: str | None = None
        self._stop: tuple[str, Entry] | None = None  # last assistant's stopReason
        self._model: tuple[str, str] | None = None
        self._reasoning: str | None = None
        # the sets below are dicts, insertion-ordered: a `Mark` keeps only their length
        self._ids: dict[str, None] = {}
        #: tool call ids given so far, and the call each id of pi's answers next
        self._call_ids: dict[str, None] = {}
        self._pending_calls: dict[str, str] = {}
        self._ts = start_ts  # for an event with no time of its own: its neighbour's
        self._inherited = 0  # records at the start of `out` shared with another converter
        # only appended to, never changed or removed: `out`, `_first`, `_ids`, `_call_ids`

    def mark(self) -> Mark:
        """This converter's state now, to carry on from later (`Mark.resume`) while this
        one goes on: kept by how far each of its growing lists and maps had got, so a mark
        costs the few small things that change, not a copy of the path so far."""
        return Mark(
            self,
            len(self.out),
            len(self._first),
            len(self._ids),
            len(self._call_ids),
            dict(self.unmapped),
            [(owner, dict(r)) for owner, r in self._pending],
            dict(self._pending_calls),
            (self._ts, self.title, self._turn, self._stop, self._model, self._reasoning),
        )

    # -- output -------------------------------------------------------------------------

    def _event(self, etype: str, entry: Entry | None, **fields: Any) -> Record:
        if entry is None:
            return {"type": etype, "ts": self._ts, **fields}
        return {
            "type": etype,
            "ts": entry.ts or self._ts,
            "src": {"id": self.source_id, "lines": [entry.line]},
            **fields,
        }

    def _emit(self, owner: str | None, record: Record) -> None:
        if owner is not None and owner not in self._first:
            self._first[owner] = len(self.out)
        if record["type"] == "context/summary":
            # what the summary replaced ends just before the first kept entry's events
            target = record.get("firstKeptEntryId")
            through = self._first.get(target) if isinstance(target, str) else None
            if through is not None:
                record["through"] = through
        self._ts = record["ts"]
        self.out.append(record)

    def _standalone(self, entry: Entry, record: Record) -> None:
        if self._turn is None:
            self._emit(entry.id, record)
        else:
            self._pending.append((entry.id, record))

    def _scoped(self, entry: Entry, record: Record) -> None:
        """A turn-scoped event: what waited inside the turn goes first, in order."""
        if self._pending:
            self._flush()
        self._emit(entry.id, record)

    def _flush(self) -> None:
        for owner, record in self._pending:
            self._emit(owner, record)
        self._pending.clear()

    def _plugin(self, kind: str, entry: Entry, fields: dict[str, Any]) -> Record:
        self.unmapped[kind] = self.unmapped.get(kind, 0) + 1
        return self._event(f"plugin/pi/{kind}", entry, **fields)

    def _message_id(self, role: str, text: str, key: str) -> str:
        mid = message_id(role, text[:80], key)
        n = 1
        while mid in self._ids:
            n += 1
            mid = message_id(role, text[:80], f"{key}#{n}")
        self._ids[mid] = None
        return mid

    # -- turns --------------------------------------------------------------------------

    def _open(self, path: Sequence[Entry], index: int, answered: bool = True) -> None:
        """Open a turn at path[index]; a model the turn's first answer uses goes just
        before it (`answered`: the model may answer in this turn)."""
        entry = path[index]
        for j in range(index, len(path) if answered else index):
            later = path[j]
            if later.type == "model_change":
                break
            if later.type != "message":
                continue
            message = later.data["message"]
            role = message["role"]
            if role == "assistant":
                # dated like the turn it precedes, made from the answer's line
                self._select_from(later, message, owner=None, ts=entry.ts)
                break
            if role in TURN_OPENERS and later is not entry:
                break
        self._turn = f"turn:{entry.id}"
        self._stop = None
        self._emit(entry.id, self._event("turn/start", entry, turn=self._turn))

    def _close(self, live: bool = False) -> None:
        if self._turn is None:
            return
        stop = self._stop
        status = _STATUS.get(stop[0]) if stop is not None else None
        if live and status in (None, "failed"):
            # still being written: no final answer yet (pi retries after an error)
            self._flush()
            return
        if stop is None or status is None:
            # the loop never gave a final answer, and something else came next
            self._emit(None, self._event("turn/end", None, turn=self._turn, status="interrupted"))
        else:
            self._emit(None, self._event("turn/end", stop[1], turn=self._turn, status=status))
        self._turn = None
        self._flush()

    def _ensure_turn(self, path: Sequence[Entry], index: int) -> None:
        if self._turn is None:
            self._open(path, index)

    # -- the path -----------------------------------------------------------------------

    def convert(self, path: Sequence[Entry], live: bool = False) -> list[Record]:
        """The events of `path`. `live`: the file is still being written, so a last turn
        without a final answer stays open instead of ending "interrupted"."""
        self.feed(path)
        return self.finish(live)

    def feed(self, path: Sequence[Entry], start: int = 0, until: int | None = None) -> None:
        """Convert path[start:until] (the entries before `start` were fed already)."""
        stop = len(path) if until is None else until
        for index in range(start, stop):
            self._entry(path, index, path[index])

    def finish(self, live: bool = False) -> list[Record]:
        """The events; each session gets records of its own."""
        self._close(live)
        self._flush()
        if self._inherited:
            self.out[: self._inherited] = [dict(r) for r in self.out[: self._inherited]]
            self._inherited = 0
        return self.out

    def _entry(self, path: Sequence[Entry], index: int, entry: Entry) -> None:
        etype = entry.type
        data = entry.data
        if etype == "message":
            self._message(path, index, entry, data["message"])
        elif etype == "model_change":
            provider, model = data.get("provider"), data.get("modelId")
            if type(provider) is str and type(model) is str:
                self._model = (provider, model)
                self._standalone(entry, self._select_event(entry))
            else:
                self._standalone(entry, self._plugin(etype, entry, entry_fields(data)))
        elif etype == "thinking_level_change":
            level = data.get("thinkingLevel")
            self._reasoning = level if type(level) is str and level != "off" else None
            if self._model is not None:
                self._standalone(entry, self._select_event(entry))
            else:
                self._standalone(entry, self._plugin(etype, entry, entry_fields(data)))
        elif etype == "session_info" and type(data.get("name")) is str and data["name"].strip():
            self.title = data["name"].strip()
            self._standalone(entry, self._event("session/title", entry, title=self.title))
        elif etype == "compaction":
            record = self._event(
                "context/summary",
                entry,
                text=str(data.get("summary", "")),
                **entry_fields(
                    data, drop=("summary", "text", "firstKeptEntryIndex", "id", "parentId")
                ),
            )
            self._standalone(entry, record)
        elif etype == "branch_summary":
            fields = entry_fields(data, drop=("summary", "text", "id", "parentId"))
            summary = str(data.get("summary", ""))
            self._standalone(
                entry, self._event("context/branch-summary", entry, text=summary, **fields)
            )
        else:
            self._standalone(entry, self._plugin(plugin_kind(etype), entry, entry_fields(data)))

    def _select_event(self, entry: Entry) -> Record:
        assert self._model is not None
        fields: dict[str, Any] = {"provider": self._model[0], "model": self._model[1]}
        if self._reasoning is not None:
            fields["reasoning"] = self._reasoning
        return self._event("model/select", entry, **fields)

    def _select_from(
        self, entry: Entry, message: dict[str, Any], owner: str | None, ts: str | None = None
    ) -> None:
        provider, model = message.get("provider"), message.get("model")
        if type(provider) is str and type(model) is str and (provider, model) != self._model:
            self._model = (provider, model)
            record = self._select_event(entry)
            if ts is not None:
                record["ts"] = ts
            self._emit(owner, record)

    def _message(
        self, path: Sequence[Entry], index: int, entry: Entry, message: dict[str, Any]
    ) -> None:
        role = message["role"]
        if role == "user":
            self._close()
            self._open(path, index)
            text_parts, images = user_content(message.get("content"))
            mid = self._message_id("user", first_text(text_parts), entry.id)
            self._scoped(
                entry,
                self._event(
                    "message", entry, id=mid, role="user", turn=self._turn, parts=text_parts
                ),
            )
            self._images(entry, images, message=mid)
        elif role == "assistant":
            self._ensure_turn(path, index)
            self._flush()
            self._select_from(entry, message, owner=entry.id)
            parts, extras = assistant_parts(message)
            self._own_call_ids(parts)
            mid = self._message_id("assistant", first_text(parts), entry.id)
            fields: dict[str, Any] = {
                "id": mid,
                "role": "assistant",
                "turn": self._turn,
                "parts": parts,
            }
            for key in ("usage", "stopReason", "errorMessage"):
                if key in message:
                    fields[key] = message[key]
            self._scoped(entry, self._event("message", entry, **fields))
            for kind, block in extras:
                self._emit(entry.id, self._plugin(kind, entry, {"message": mid, "block": block}))
            reason = message.get("stopReason")
            self._stop = (reason if type(reason) is str else "stop", entry)
        elif role == "toolResult":
            self._ensure_turn(path, index)
            text_parts, images = user_content(message.get("content"))
            call = str(message.get("toolCallId", ""))
            # the latest call of that id still waiting for its result, as pi pairs them
            call = self._pending_calls.pop(call, call)
            fields = {
                "turn": self._turn,
                "call": call,
                "tool": str(message.get("toolName", "")),
                "output": "\n".join(p["text"] for p in text_parts),
            }
            if message.get("isError"):
                fields["error"] = True
            if "details" in message:
                fields["details"] = message["details"]
            self._scoped(entry, self._event("tool/result", entry, **fields))
            self._images(entry, images, call=call)
        elif role == "bashExecution":
            self._bash(path, index, entry, message)
        elif role == "custom":
            self._standalone(entry, self._plugin("custom_message", entry, entry_fields(entry.data)))
        else:
            self._standalone(entry, self._plugin("message", entry, entry_fields(entry.data)))

    def _own_call_ids(self, parts: list[dict[str, Any]]) -> None:
        """Give each tool call an id of its own in the session: a model may repeat an id
        (some providers number calls per reply), and a result must name the one call it
        answers. A repeated id becomes `<id>_<n>` (letters, digits, _ and - only, as the
        providers want ids; pi's own stays as `callId`); pi pairs
        a result with the latest call of its id still waiting for one."""
        for part in parts:
            if part.get("type") != "tool_call":
                continue
            given = part["id"]
            unique, n = given, 1
            while unique in self._call_ids:
                n += 1
                unique = f"{given}_{n}"
            self._call_ids[unique] = None
            self._pending_calls[given] = unique
            if unique != given:
                part["id"], part["callId"] = unique, given

    def _images(self, entry: Entry, images: list[tuple[int, dict[str, Any]]], **ref: str) -> None:
        for index, block in images:
            fields = {
                **ref,
                "index": index,
                "mimeType": block.get("mimeType"),
                "data": block.get("data"),
            }
            self._emit(entry.id, self._plugin("image", entry, fields))

    def _bash(
        self, path: Sequence[Entry], index: int, entry: Entry, message: dict[str, Any]
    ) -> None:
        self._close()
        self._open(path, index, answered=False)  # pi runs it; no model answers
        command = str(message.get("command", ""))
        prompt = ("!!" if message.get("excludeFromContext") else "!") + command
        user = self._message_id("user", prompt, entry.id)
        self._scoped(
            entry,
            self._event(
                "message",
                entry,
                id=user,
                role="user",
                turn=self._turn,
                parts=[{"type": "text", "text": prompt}],
            ),
        )
        call = f"bash-{entry.id}"
        answer = self._message_id("assistant", "", f"{entry.id}:bash")
        parts = [{"type": "tool_call", "id": call, "name": "bash", "args": {"command": command}}]
        self._emit(
            entry.id,
            self._event(
                "message", entry, id=answer, role="assistant", turn=self._turn, parts=parts
            ),
        )
        exit_code = message.get("exitCode")
        failed = bool(message.get("cancelled")) or (type(exit_code) is int and exit_code != 0)
        result: dict[str, Any] = {
            "turn": self._turn,
            "call": call,
            "tool": "bash",
            "output": str(message.get("output", "")),
        }
        if failed:
            result["error"] = True
        for key in ("exitCode", "cancelled", "truncated", "fullOutputPath", "excludeFromContext"):
            if key in message:
                result[key] = message[key]
        self._emit(entry.id, self._event("tool/result", entry, **result))
        self._stop = ("aborted" if message.get("cancelled") else "stop", entry)
        self._close()


@dataclass(frozen=True, slots=True)
class Mark:
    """A `PathConverter`'s state at one point of its path (`PathConverter.mark`): the
    length of each list or map it only ever appends to, and copies of the rest (small: the
    counts of unmapped kinds, what waits inside the open turn, the calls awaiting
    results)."""

    of: PathConverter
    out: int
    first: int
    ids: int
    call_ids: int
    unmapped: dict[str, int]
    pending: list[tuple[str, Record]]
    pending_calls: dict[str, str]
    scalars: tuple[str, str | None, str | None, tuple[str, Entry] | None,
                   tuple[str, str] | None, str | None]  # fmt: skip

    def resume(self) -> PathConverter:
        """A new converter in the marked state. The records made until then are shared
        until `finish` copies them (records in `out` are never changed again)."""
        source = self.of
        other = PathConverter(source.source_id)
        other.out = source.out[: self.out]
        other._inherited = self.out
        other._first = dict(islice(source._first.items(), self.first))
        other._ids = dict.fromkeys(islice(source._ids, self.ids))
        other._call_ids = dict.fromkeys(islice(source._call_ids, self.call_ids))
        other.unmapped = dict(self.unmapped)
        other._pending = [(owner, dict(r)) for owner, r in self.pending]
        other._pending_calls = dict(self.pending_calls)
        (other._ts, other.title, other._turn, other._stop, other._model,
         other._reasoning) = self.scalars  # fmt: skip
        return other

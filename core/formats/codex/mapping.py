"""Codex rollout lines -> Forkwise events: one pass, one state machine.

What the mapping decides, line by line:

- `response_item` lines are the conversation (what the model saw). A user message that is a
  typed prompt starts a turn; developer/system messages and what Codex injects as a user
  message (environment context, AGENTS.md / user instructions, notices) become
  `plugin/codex/context` events, never prompts. Assistant text, reasoning summaries and
  tool calls (`function_call` with its JSON-string arguments decoded, `custom_tool_call`
  such as apply_patch with its raw input, `local_shell_call` with its action) are messages;
  their outputs are `tool/result`s paired by call id (`error` when the output reports a
  non-zero exit code or `success: false`).
- `event_msg` lines that only repeat a response item for the UI make no event of their own
  (see DUPLICATES); their line numbers join the `src` of the next event, so an export copies
  them back with the conversation. `task_started` / `task_complete` / `turn_aborted` are the
  turn brackets (`turn_aborted` with reason "interrupted" -> "cancelled", other reasons ->
  "interrupted"). Every other event_msg (token counts and rate limits, exec/patch
  begin-end notices, errors, …) is a `plugin/codex/<type>` event carrying the payload.
- `turn_context` gives the model and reasoning effort: a `model/select` when they change.
- `compacted` is a `context/summary` (with Codex's replacement history, when it kept one).
- `thread_rolled_back` drops the last N turns that hold a typed prompt, and the turns after
  them, from the main line; the caller keeps what was dropped as a branch (`branches`).
- Plugin kinds besides the event_msg types: `context` (above), `encrypted_reasoning` (the
  opaque part of a reasoning item), `image` (an image in a prompt), `reasoning` (a reasoning
  item with no readable text), the type of any other response item (`web_search_call`, …)
  and of any other line (`world_state`, `token_usage_record`, a type yet unknown).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import orjson

from forkwise.core.log.usage import USAGE, openai_tokens, usage_draft

from ..base import UNREADABLE, Record, message_id
from .lines import Line

PROVIDER = "openai"

#: event_msg types that repeat a response item (or an item's progress) for the UI.
DUPLICATES = frozenset(
    {
        "user_message",
        "agent_message",
        "agent_message_delta",
        "agent_reasoning",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content",
        "agent_reasoning_raw_content_delta",
        "agent_reasoning_section_break",
        "item_started",
        "item_completed",
        "raw_response_item",
    }
)

#: How Codex marks the user-role messages it writes itself (not typed by the person).
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<subagent_notification>",
    "<skill>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<model_switch>",
    "<personality_spec>",
    "<realtime_conversation>",
)

_UNREADABLE = f"plugin/codex/{UNREADABLE}"
_CANCEL_REASONS = frozenset({"interrupted", "user_interrupted"})


def is_injected(text: str) -> bool:
    """Whether a user-role message is context Codex injected rather than a typed prompt."""
    return text.lstrip().startswith(_INJECTED)


def content_text(content: object) -> tuple[str, list[Any]]:
    """The text of a message's content items, and the items that are not text (images)."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    other: list[Any] = []
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                texts.append(item["text"])
            elif item is not None:
                other.append(item)
    return "\n".join(texts), other


def decode_args(arguments: object) -> Any:
    """A function call's `arguments` JSON string, decoded; kept as given if it is not JSON."""
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    try:
        return orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments


def _failed_output(output: object) -> bool:
    """Whether a tool output says the call failed (a `success: false` payload, a shell exit
    code other than 0 in Codex's JSON or text summaries). Looks for the markers instead of
    decoding the output: this runs for every tool result of an import."""
    if isinstance(output, dict):
        if output.get("success") is False:
            return True
        output = output.get("content", output.get("output"))
    if not isinstance(output, str):
        return False
    size = len(output)
    for marker in ('"exit_code":', "Process exited with code ", "Exit code: "):
        # Codex's JSON summary keeps its metadata last (searched from the end: the key is
        # there, a few characters back, and escaped inside the output it never matches);
        # its text summaries start with it
        at = output.rfind(marker, size - 400) if marker[0] == '"' else output.find(marker, 0, 400)
        if at >= 0:
            digits = output[at + len(marker) : at + len(marker) + 8].lstrip()
            end = 1 if digits[:1] == "-" else 0
            while end < len(digits) and digits[end].isdigit():
                end += 1
            return end > 0 and digits[:end] not in ("0", "-0") and digits[:end] != "-"
    return False


class Mapper:
    """Feeds rollout lines in order; `finish()` closes what the file left open.

    Every event is made in the key order of a log line, `seq` first (0, for the import to
    number: `ImportedSession.numbered`), then `type` and `ts`, so that the import numbers
    the records where they are instead of copying each one to put `seq` first."""

    def __init__(self, provider: str = PROVIDER) -> None:
        self.provider = provider
        self.events: list[Record] = []
        #: per rollback: its line, the events before it, and where they leave the main line
        self.branches: list[tuple[int, list[Record], int]] = []
        self.unmapped: Counter[str] = Counter()
        self.first_prompt: str | None = None
        #: the working directory the first environment context names
        self.context_cwd: str | None = None
        self._turn: str | None = None
        self._turn_prompted = False
        self._turn_failed = False
        #: where each turn that holds a typed prompt starts (what a rollback counts)
        self._prompted_starts: list[int] = []
        self._turn_start = 0
        self._turn_count = 0
        self._item = 0
        self._codex_turn: str | None = None
        self._bracketed = False
        self._model: tuple[str, str | None] | None = None
        #: the last `token_count` total, as usage fields (`_usage`)
        self._usage_total: dict[str, int] | None = None
        self._calls: dict[str, str] = {}
        self._used: set[str] = set()
        #: lines of the file being fed (`_src`) waiting for the next event's src
        self._pending: list[int] = []
        self._src = ""
        self._ts = ""

    # -- plumbing -------------------------------------------------------------------------

    def _emit(self, record: Record, no: int | None) -> None:
        """Append an event (made with `seq`, `type` and `ts` first: see `Mapper`); one made
        from line `no` carries it (and the lines waiting) as src."""
        if no is not None:
            if self._pending:  # all of them of this file: `feed` flushes them on a change
                lines = self._pending
                lines.append(no)
                self._pending = []
            else:
                lines = [no]
            record["src"] = {"id": self._src, "lines": lines}
        self.events.append(record)

    def _plugin(self, kind: str, payload: Any, no: int) -> None:
        self.unmapped[kind] += 1
        record = {"seq": 0, "type": f"plugin/codex/{kind}", "ts": self._ts, "payload": payload}
        self._emit(record, no)

    def _unique(self, key: str) -> str:
        used = self._used
        if key not in used:
            used.add(key)
            return key
        out, n = key, 1
        while out in used:
            n += 1
            out = f"{key}#{n}"
        used.add(out)
        return out

    def _message(self, role: str, parts: list[Record], text: str, key: str | None, no: int) -> None:
        """A message event from line `no` (`_emit` and `_unique` inline: a third of the
        lines of a rollout are messages)."""
        turn = self._turn
        if turn is None:
            turn = self._open(no)
        self._item += 1
        unique = f"{role}:{key}" if key else f"{role}:{turn}:{self._item}"
        used = self._used
        if unique in used:
            unique = self._unique(unique)
        else:
            used.add(unique)
        # the slug is the first words: a long text need not be scanned whole
        mid = message_id(role, text[:256], unique)
        pending = self._pending
        if pending:
            pending.append(no)
            self._pending = []
        else:
            pending = [no]
        self.events.append(
            {
                "seq": 0,
                "type": "message",
                "ts": self._ts,
                "id": mid,
                "role": role,
                "turn": turn,
                "parts": parts,
                "src": {"id": self._src, "lines": pending},
            }
        )

    # -- turns ----------------------------------------------------------------------------

    def _open(self, no: int | None) -> str:
        """Start a turn (made from line `no`); its id."""
        self._turn_count += 1
        wanted = f"turn-{self._codex_turn}" if self._codex_turn else f"turn-{self._turn_count}"
        turn = self._turn = self._unique(wanted)
        self._turn_prompted = False
        self._turn_failed = False
        self._item = 0
        self._turn_start = len(self.events)
        self._emit({"seq": 0, "type": "turn/start", "ts": self._ts, "turn": turn}, no)
        return turn

    def _close(self, status: str, no: int | None) -> None:
        if self._turn is None:
            return
        turn = self._turn
        self._emit(
            {"seq": 0, "type": "turn/end", "ts": self._ts, "turn": turn, "status": status}, no
        )
        self._turn = None
        self._codex_turn = None

    def _select(self, model: str, effort: str | None, no: int) -> bool:
        if self._model == (model, effort):
            return False
        self._model = (model, effort)
        record: Record = {
            "seq": 0,
            "type": "model/select",
            "ts": self._ts,
            "provider": self.provider,
            "model": model,
        }
        if effort:
            record["reasoning"] = effort
        self._emit(record, no)
        return True

    # -- feeding --------------------------------------------------------------------------

    def feed(self, lines: Iterable[Line], src: str, ts: dict[int, str] | None = None) -> None:
        """Map `lines` of the file whose source id is `src`; `ts` overrides a line's time
        (a forked file's copy of its parent's lines carries the fork's time)."""
        if self._pending and src != self._src:
            self._flush_pending()
        self._src = src
        response_item, event_msg = self._response_item, self._event_msg
        duplicates = DUPLICATES
        for no, _start, _end, line_ts, kind, p, _ordinal in lines:
            self._ts = ts.get(no, line_ts) if ts else line_ts
            if type(p) is not dict:
                if kind == UNREADABLE:  # a line that is not JSON, kept as it is
                    self.unmapped[kind] += 1
                    self._emit({"seq": 0, "type": _UNREADABLE, "ts": self._ts, "text": p}, no)
                else:
                    self._plugin(kind, p, no)
            elif kind == "response_item":
                response_item(p, no)
            elif kind == "event_msg":
                etype = p.get("type")
                if type(etype) is str and etype in duplicates:
                    self._pending.append(no)  # the commonest line: its event comes next
                    if self.first_prompt is None and etype == "user_message":
                        self._first_user_message(p)
                else:
                    event_msg(p, no)
            elif kind == "turn_context":
                self._turn_context(p, no)
            elif kind == "compacted":
                text = str(p.get("message", ""))
                record: Record = {"seq": 0, "type": "context/summary", "ts": self._ts, "text": text}
                if p.get("replacement_history") is not None:
                    record["replacement_history"] = p["replacement_history"]
                self._emit(record, no)
            elif kind == "session_meta":
                self._pending.append(no)  # an ancestor's header, repeated by a fork
            else:
                self._plugin(kind, p, no)

    def _first_user_message(self, p: dict[str, Any]) -> None:
        """The first prompt as Codex shows it, from its `user_message` event: a thread may
        have no user response item for it (a spawned subagent's task)."""
        text = p.get("message")
        if isinstance(text, str) and text.strip() and not is_injected(text):
            self.first_prompt = text

    def _flush_pending(self) -> None:
        for record in reversed(self.events):
            src = record.get("src")
            if src is not None:
                if src["id"] == self._src:
                    src["lines"].extend(self._pending)
                break
        self._pending = []

    def _response_item(self, p: dict[str, Any], no: int) -> None:
        kind = p.get("type")
        item_id = p.get("id")
        if type(item_id) is not str:
            item_id = None
        if kind == "message":
            text, other = content_text(p.get("content"))
            role = p.get("role")
            if role == "assistant":
                self._message("assistant", [{"type": "text", "text": text}], text, item_id, no)
            elif role == "user" and not is_injected(text):
                self._prompt(text, other, item_id, no)
            else:
                if self.context_cwd is None and "<cwd>" in text:
                    self.context_cwd = text.split("<cwd>", 1)[1].split("</cwd>", 1)[0].strip()
                self._plugin("context", p, no)
        elif kind == "reasoning":
            texts = [s.get("text", "") for s in p.get("summary") or [] if isinstance(s, dict)]
            texts += [c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict)]
            text = "\n\n".join(t for t in texts if t)
            if text:
                self._message("assistant", [{"type": "reasoning", "text": text}], text, item_id, no)
            encrypted = p.get("encrypted_content")
            if encrypted and text:
                self.unmapped["encrypted_reasoning"] += 1
                self._emit(
                    {
                        "seq": 0,
                        "type": "plugin/codex/encrypted_reasoning",
                        "ts": self._ts,
                        "id": item_id,
                        "encrypted_content": encrypted,
                    },
                    no,
                )
            elif not text:
                self._plugin("reasoning", p, no)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self._tool_call(kind, p, item_id, no)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call = str(p.get("call_id", ""))
            turn = self._turn
            if turn is None:
                turn = self._open(no)
            output = p.get("output")
            record: Record = {
                "seq": 0,
                "type": "tool/result",
                "ts": self._ts,
                "turn": turn,
                "call": call,
                "tool": self._calls.get(call, "unknown"),
                "output": output,
            }
            if _failed_output(output):
                record["error"] = True
            self._emit(record, no)
        else:
            self._plugin(str(kind or "response_item"), p, no)

    def _prompt(self, text: str, other: list[Any], item_id: str | None, no: int) -> None:
        if self._turn is not None and (self._turn_prompted and not self._bracketed):
            self._close("completed", None)  # an old rollout without task brackets
        if self._turn is None:
            self._open(no)
        if not self._turn_prompted:
            self._prompted_starts.append(self._turn_start)
        self._turn_prompted = True
        if self.first_prompt is None and text.strip():
            self.first_prompt = text
        self._message("user", [{"type": "text", "text": text}], text, item_id, no)
        for item in other:
            self.unmapped["image"] += 1
            image = {"seq": 0, "type": "plugin/codex/image", "ts": self._ts, "turn": self._turn}
            image["item"] = item
            self._emit(image, no)

    def _tool_call(self, kind: str, p: dict[str, Any], item_id: str | None, no: int) -> None:
        call = str(p.get("call_id") or p.get("id") or "")
        if kind == "function_call":
            name, args = str(p.get("name", "")), decode_args(p.get("arguments"))
        elif kind == "custom_tool_call":
            name, args = str(p.get("name", "")), p.get("input", "")
        else:
            name, args = "local_shell", p.get("action", {})
        self._calls[call] = name
        part = {"type": "tool_call", "id": call, "name": name, "args": args}
        self._message("assistant", [part], name, item_id or call, no)

    def _event_msg(self, p: dict[str, Any], no: int) -> None:
        kind = str(p.get("type", ""))
        if kind in DUPLICATES:
            self._pending.append(no)
        elif kind == "task_started":
            if self._turn is not None:
                self._close("failed" if self._turn_failed else "interrupted", None)
            self._bracketed = True
            turn_id = p.get("turn_id")
            self._codex_turn = turn_id if isinstance(turn_id, str) and turn_id else None
            self._pending.append(no)
        elif kind == "task_complete":
            if self._turn is None:
                self._pending.append(no)
            else:
                self._close("completed", no)
        elif kind == "turn_aborted":
            if self._turn is None:
                self._pending.append(no)
            else:
                reason = p.get("reason")
                self._close("cancelled" if reason in _CANCEL_REASONS else "interrupted", no)
        elif kind == "thread_rolled_back":
            self._rollback(p, no)
        else:
            if kind in ("error", "stream_error") and self._turn is not None:
                self._turn_failed = kind == "error"
            self._plugin(kind or "event_msg", p, no)
            if kind == "token_count":
                self._usage(p, no)

    def _usage(self, p: dict[str, Any], no: int) -> None:
        """A `usage` event for what a `token_count` adds to the running total (Codex repeats
        the total after each request; an unchanged one adds nothing). A total that went
        down (a new process) counts its last request."""
        info = p.get("info")
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if not isinstance(total, dict):
            return
        now = openai_tokens(total)
        before = self._usage_total
        self._usage_total = now
        if before is None:
            delta = now
        else:
            delta = {k: now[k] - before[k] for k in now}
            if any(v < 0 for v in delta.values()):
                last = info.get("last_token_usage") if isinstance(info, dict) else None
                delta = openai_tokens(last) if isinstance(last, dict) else {}
        if not any(delta.values()):
            return
        model = self._model[0] if self._model is not None else ""
        draft = usage_draft(model, delta, provider=self.provider, raw=total)
        del draft["type"]
        record: Record = {"seq": 0, "type": USAGE, "ts": self._ts, **draft}
        if self._turn is not None:
            record["turn"] = self._turn
        record["src"] = {"id": self._src, "lines": [no]}
        self.events.append(record)

    def _turn_context(self, p: dict[str, Any], no: int) -> None:
        turn_id = p.get("turn_id")
        if self._turn is None and isinstance(turn_id, str) and turn_id:
            self._codex_turn = turn_id
        model = p.get("model")
        effort = p.get("effort")
        if effort is None:
            mode = p.get("collaboration_mode")
            settings = mode.get("settings") if isinstance(mode, dict) else None
            effort = settings.get("reasoning_effort") if isinstance(settings, dict) else None
        if not (
            isinstance(model, str)
            and model
            and self._select(model, effort if isinstance(effort, str) else None, no)
        ):
            self._pending.append(no)

    def _rollback(self, p: dict[str, Any], no: int) -> None:
        """Drop the last `num_turns` turns that hold a typed prompt, and every turn after
        the first of them: Codex counts only those (a compaction's reply is a turn without
        one), and keeps what came before the first prompt when asked for more."""
        if self._turn is not None:
            self._close("failed" if self._turn_failed else "interrupted", None)
        num_turns = p.get("num_turns")
        n = num_turns if isinstance(num_turns, int) else 0
        starts = self._prompted_starts
        if n > 0 and starts:
            cut = starts[-min(n, len(starts))]
            self.branches.append((no, list(self.events), cut))
            del self.events[cut:]
            self._prompted_starts = [i for i in starts if i < cut]
            self._model = None
            for record in reversed(self.events):
                if record["type"] == "model/select":
                    self._model = (record["model"], record.get("reasoning"))
                    break
        self._plugin("thread_rolled_back", p, no)

    @property
    def turn_open(self) -> bool:
        """Whether the lines fed so far leave a turn open (`finish` closes it unless live)."""
        return self._turn is not None

    def finish(self, live: bool) -> None:
        """End of the file: waiting lines join the last event; an open turn is closed as
        interrupted (or failed) unless Codex is still writing this file."""
        if self._pending:
            self._flush_pending()
        if self._turn is not None and not live:
            if not self._bracketed:
                self._close("completed", None)
            else:
                self._close("failed" if self._turn_failed else "interrupted", None)

"""Deterministic Codex rollouts for the format tests.

The shapes are those Codex writes (read from openai/codex `protocol.rs` / `models.rs` and
checked against rollouts codex-cli 0.171.0 wrote in legacy history mode): a `session_meta`
line, then per turn `event_msg task_started`, `turn_context`, the user `response_item` with
its `user_message` twin, reasoning (`agent_reasoning` twin, encrypted content), tool calls
(`function_call` with a JSON-string `arguments`, `custom_tool_call` for apply_patch,
`local_shell_call`), their outputs, `web_search_call`, `token_count`, `task_complete` /
`turn_aborted`, plus `compacted` and `thread_rolled_back`. A legacy fork file repeats its
parent's lines (its `session_meta` included) stamped with the fork's time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

OLD = 1_600_000_000  # mtime given to written files: long finished, not being written


def thread_id(n: int) -> str:
    return f"0199{n:04x}-0000-7000-8000-{n:012x}"


@dataclass
class Rollout:
    """A rollout being built line by line; `write` puts it in a Codex home."""

    tid: str
    cwd: str = "/work/proj"
    start: datetime = field(default_factory=lambda: datetime(2025, 9, 1, 10, 0, tzinfo=UTC))
    lines: list[dict[str, Any]] = field(default_factory=list)
    _tick: int = 0
    _turns: int = 0

    def ts(self) -> str:
        self._tick += 1
        moment = self.start + timedelta(milliseconds=250 * self._tick)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def add(self, kind: str, payload: Any) -> Rollout:
        self.lines.append({"timestamp": self.ts(), "type": kind, "payload": payload})
        return self

    def event(self, kind: str, **fields: Any) -> Rollout:
        return self.add("event_msg", {"type": kind, **fields})

    def item(self, kind: str, **fields: Any) -> Rollout:
        return self.add("response_item", {"type": kind, **fields})

    def meta(self, **extra: Any) -> Rollout:
        payload = {
            "id": self.tid,
            "timestamp": self.ts(),
            "cwd": self.cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.46.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent."},
            **extra,
        }
        return self.add("session_meta", payload)

    def context(self, model: str = "gpt-5-codex", effort: str | None = "medium") -> Rollout:
        payload = {
            "cwd": self.cwd,
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "network_access": False},
            "model": model,
            "summary": "auto",
        }
        if effort:
            payload["effort"] = effort
        return self.add("turn_context", payload)

    def injected(self) -> Rollout:
        """What Codex puts before the first prompt: developer text, AGENTS.md, environment."""
        self.item(
            "message",
            role="developer",
            content=[{"type": "input_text", "text": "<permissions instructions>…"}],
        )
        self.item(
            "message",
            role="user",
            content=[
                {
                    "type": "input_text",
                    "text": "# AGENTS.md instructions for /work/proj\n\n<INSTRUCTIONS>\nRun tests.\n"
                    "</INSTRUCTIONS>",
                }
            ],
        )
        return self.item(
            "message",
            role="user",
            content=[
                {
                    "type": "input_text",
                    "text": f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n</environment_context>",
                }
            ],
        )

    def prompt(self, text: str) -> Rollout:
        self.item("message", role="user", content=[{"type": "input_text", "text": text}])
        return self.event(
            "user_message", message=text, images=[], local_images=[], text_elements=[]
        )

    def answer(self, text: str, item_id: str | None = None) -> Rollout:
        self.event("agent_message", message=text)
        fields: dict[str, Any] = {
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }
        if item_id:
            fields["id"] = item_id
        return self.item("message", **fields)

    def think(self, text: str, n: int) -> Rollout:
        self.event("agent_reasoning", text=text)
        return self.item(
            "reasoning",
            id=f"rs_{n}",
            summary=[{"type": "summary_text", "text": text}],
            content=None,
            encrypted_content=f"gAAAA{n:04d}",
        )

    def tokens(self, total: int) -> Rollout:
        usage = {
            "input_tokens": total,
            "cached_input_tokens": 0,
            "output_tokens": 20,
            "reasoning_output_tokens": 5,
            "total_tokens": total + 20,
        }
        return self.event(
            "token_count",
            info={
                "total_token_usage": usage,
                "last_token_usage": usage,
                "model_context_window": 272000,
            },
            rate_limits={"primary": {"used_percent": 4.0, "window_minutes": 300}},
        )

    def turn(
        self,
        prompt: str,
        answer: str,
        *,
        model: str = "gpt-5-codex",
        effort: str | None = "medium",
        shell: tuple[str, str, int] | None = None,
        end: str | None = "complete",
        first: bool = False,
    ) -> Rollout:
        """One user turn; `shell` = (call id, output, exit code) adds a shell call."""
        self._turns += 1
        turn = f"turn-{self.tid[-4:]}-{self._turns}"
        self.event("task_started", turn_id=turn, model_context_window=272000)
        if first:
            self.injected()
        self.context(model, effort)
        self.prompt(prompt)
        self.think(f"**Planning** {prompt}", self._turns)
        if shell is not None:
            call, output, code = shell
            self.item(
                "function_call",
                name="shell",
                call_id=call,
                arguments=json.dumps({"command": ["bash", "-lc", "ls"], "timeout_ms": 1000}),
            )
            self.event("exec_command_end", call_id=call, exit_code=code, stdout=output)
            self.item(
                "function_call_output",
                call_id=call,
                output=json.dumps(
                    {"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.1}}
                ),
            )
        self.answer(answer, item_id=f"msg_{self.tid[-4:]}_{self._turns}")
        self.tokens(1000 * self._turns)
        if end == "complete":
            self.event("task_complete", turn_id=turn, last_agent_message=answer)
        elif end is not None:
            self.event("turn_aborted", turn_id=turn, reason=end)
        return self

    def raw(self) -> bytes:
        return b"".join(
            json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in self.lines
        )

    def path_in(self, home: Path, archived: bool = False) -> Path:
        day = self.start.strftime("%Y/%m/%d")
        folder = home / "archived_sessions" if archived else home / "sessions" / day
        return folder / f"rollout-{self.start.strftime('%Y-%m-%dT%H-%M-%S')}-{self.tid}.jsonl"

    def write(self, home: Path, *, archived: bool = False, data: bytes | None = None) -> Path:
        path = self.path_in(home, archived)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.raw() if data is None else data)
        os.utime(path, (OLD, OLD))
        return path


def fork_of(parent: Rollout, tid: str, minutes: int = 30) -> Rollout:
    """A legacy fork as Codex writes it: its own meta, then every parent line again,
    stamped with the fork's time."""
    child = Rollout(tid, parent.cwd, parent.start + timedelta(minutes=minutes))
    child.meta(forked_from_id=parent.tid)
    for line in parent.lines:
        child.lines.append({**line, "timestamp": child.ts()})
    child._turns = parent._turns
    return child


def name_thread(home: Path, tid: str, name: str, when: str = "2025-09-01T12:00:00Z") -> None:
    with open(home / "session_index.jsonl", "a") as fh:
        fh.write(json.dumps({"id": tid, "thread_name": name, "updated_at": when}) + "\n")


def basic(n: int = 1) -> Rollout:
    """Two turns: the first with a failing shell call, the second with apply_patch, a local
    shell call and a web search."""
    r = Rollout(thread_id(n)).meta()
    r.turn("list the files", "There are two files.", shell=("call_ls", "a.py\nb.py", 0), first=True)
    r._turns += 1
    r.event("task_started", turn_id=f"turn-{r.tid[-4:]}-2", model_context_window=272000)
    r.context("gpt-5-codex", "high")
    r.prompt("fix the bug")
    r.think("**Fixing**", 2)
    patch = "*** Begin Patch\n*** Update File: a.py\n-x\n+y\n*** End Patch"
    r.item(
        "custom_tool_call",
        status="completed",
        call_id="call_patch",
        name="apply_patch",
        input=patch,
    )
    r.event("patch_apply_end", call_id="call_patch", stdout="Success.", stderr="", success=True)
    r.item(
        "custom_tool_call_output",
        call_id="call_patch",
        output=json.dumps({"output": "Success. Updated a.py", "metadata": {"exit_code": 0}}),
    )
    r.item(
        "local_shell_call",
        call_id="call_test",
        status="completed",
        action={"type": "exec", "command": ["pytest", "-q"], "timeout_ms": 60000},
    )
    r.item(
        "function_call_output",
        call_id="call_test",
        output="Exit code: 1\nWall time: 0.2 seconds\nOutput:\n1 failed",
    )
    r.item("web_search_call", status="completed", action={"type": "search", "query": "pytest"})
    r.answer("Patched a.py; one test still fails.", item_id="msg_fix")
    r.tokens(3000)
    r.event(
        "task_complete",
        turn_id=f"turn-{r.tid[-4:]}-2",
        last_agent_message="Patched a.py; one test still fails.",
    )
    return r


BARE_TS = "2025-06-01T10:00:00.000Z"


def write_bare(home: Path, tid: str) -> Path:
    """A rollout as Codex wrote them before the envelope (mid-2025): the session meta bare
    on line 1, then bare response items and `record_type: state` markers."""

    def say(role: str, text: str) -> dict[str, Any]:
        kind = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    lines = [
        {
            "id": tid,
            "timestamp": BARE_TS,
            "instructions": None,
            "git": {"commit_hash": "abc", "branch": "main"},
        },
        {"record_type": "state"},
        say("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
        say("user", "what is here?"),
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "c1",
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": '{"output":"a\\n","metadata":{"exit_code":0,"duration_seconds":0.0}}',
        },
        say("assistant", "One file."),
        {"record_type": "state"},
        say("user", "thanks"),
        say("assistant", "You are welcome."),
    ]
    path = Rollout(tid).path_in(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(x).encode() + b"\n" for x in lines))
    os.utime(path, (OLD, OLD))
    return path


def home_with_fork(home: Path) -> Path:
    """A Codex home holding a named thread (basic(1)) and a fork of it with one more turn."""
    parent = basic(1)
    parent.write(home)
    child = fork_of(parent, thread_id(2))
    child.prompt("and one more thing")
    child.answer("Done.", item_id="msg_more")
    child.write(home)
    name_thread(home, parent.tid, "Fix the parser bug")
    return home


#: the prompts of `rolled_back_twice`: the first, those of each rolled-back tail, the last
ROLLED_BACK = (
    "Why is the nightly job slow?",
    ("check the database indexes", "add them"),
    tuple(f"check the network calls, step {n}" for n in range(1, 8)),
    "check the cache settings",
)


def rolled_back_twice(n: int = 20) -> Rollout:
    """A thread rolled back twice (each `thread_rolled_back` drops the last turns, as
    Codex's undo does): asked, two turns dropped, seven turns on another way, dropped, a
    third way. Not named: titled by its first prompt. The second rollback's line number has
    a digit more than the first's (ids ending `-rb<line>` sort the other way round)."""
    first, dropped, again, last = ROLLED_BACK
    r = Rollout(thread_id(n)).meta()
    r.turn(first, "Let me look at the logs.", first=True)
    for prompt in dropped:
        r.turn(prompt, f"Done: {prompt}.")
    r.event("thread_rolled_back", num_turns=len(dropped))
    for prompt in again:
        r.turn(prompt, f"Done: {prompt}.")
    r.event("thread_rolled_back", num_turns=len(again))
    r.turn(last, "The cache is off.")
    return r

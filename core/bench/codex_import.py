"""Codex import speed: `python -m forkwise.core.bench.codex_import [--mb 200] [--json]`.

Writes a synthetic Codex home of about `--mb` MB of rollouts (turns with reasoning, shell
calls and their outputs, token counts, UI twins, a legacy fork per ten threads), then times
the Codex reader over every file against the baseline the import contract names: reading
the same files and parsing each line with orjson. Target: within 3x of the baseline.
Both are timed in CPU seconds of this process (the files are in the page cache after the
first pass; wall time on a shared machine measures the neighbours).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from ..formats.codex import CodexReader

_OUTPUT = "\n".join(f"line {i}: " + "x" * 60 for i in range(30))


def _thread(n: int) -> str:
    return f"0199{n:04x}-0000-7000-8000-{n:012x}"


def _rollout(n: int, turns: int, fork_of: list[bytes] | None = None) -> list[bytes]:
    tid = _thread(n)
    clock = iter(range(10**9))

    def line(kind: str, payload: dict[str, Any]) -> bytes:
        ms = next(clock)
        ts = f"2025-09-01T10:{(ms // 60000) % 60:02d}:{(ms // 1000) % 60:02d}.{ms % 1000:03d}Z"
        return orjson.dumps({"timestamp": ts, "type": kind, "payload": payload})

    meta: dict[str, Any] = {
        "id": tid,
        "timestamp": "2025-09-01T10:00:00.000Z",
        "cwd": "/work/proj",
        "originator": "codex_cli_rs",
        "cli_version": "0.46.0",
        "source": "cli",
        "model_provider": "openai",
        "base_instructions": {"text": "You are Codex. " * 600},
    }
    out = [line("session_meta", meta)]
    if fork_of is not None:
        out[0] = line("session_meta", {**meta, "forked_from_id": _thread(n - 1)})
        out.extend(fork_of)
    for t in range(turns):
        turn = f"turn-{n}-{t}"
        call = f"call_{n}_{t}"
        text = f"prompt {t} of thread {n}: please look at the code and fix the failing test"
        out += [
            line("event_msg", {"type": "task_started", "turn_id": turn}),
            line(
                "turn_context",
                {
                    "cwd": "/work/proj",
                    "approval_policy": "on-request",
                    "sandbox_policy": {"type": "workspace-write"},
                    "model": "gpt-5-codex",
                    "effort": "medium",
                    "summary": "auto",
                },
            ),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            ),
            line("event_msg", {"type": "user_message", "message": text, "images": []}),
            line("event_msg", {"type": "agent_reasoning", "text": "**Looking** at it"}),
            line(
                "response_item",
                {
                    "type": "reasoning",
                    "id": f"rs_{n}_{t}",
                    "summary": [{"type": "summary_text", "text": "**Looking** at it"}],
                    "encrypted_content": "gAAAA" + "z" * 800,
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "call_id": call,
                    "arguments": '{"command":["bash","-lc","pytest -q"]}',
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": call,
                    "output": orjson.dumps(
                        {"output": _OUTPUT, "metadata": {"exit_code": 1}}
                    ).decode(),
                },
            ),
            line("event_msg", {"type": "agent_message", "message": "Fixed it."}),
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "id": f"msg_{n}_{t}",
                    "content": [{"type": "output_text", "text": "Fixed it."}],
                },
            ),
            line(
                "event_msg",
                {"type": "token_count", "info": {"total_token_usage": {"total_tokens": 1000 * t}}},
            ),
            line(
                "event_msg",
                {"type": "task_complete", "turn_id": turn, "last_agent_message": "Fixed it."},
            ),
        ]
    return out


def write_home(home: Path, megabytes: float) -> int:
    """Rollouts until the home holds about `megabytes` MB; returns the bytes written."""
    folder = home / "sessions" / "2025" / "09" / "01"
    folder.mkdir(parents=True, exist_ok=True)
    total, n, previous = 0, 0, None
    while total < megabytes * 1_000_000:
        n += 1
        fork = previous is not None and n % 10 == 0
        lines = _rollout(n, 40, previous[1:] if fork and previous else None)
        data = b"\n".join(lines) + b"\n"
        (folder / f"rollout-2025-09-01T10-00-00-{_thread(n)}.jsonl").write_bytes(data)
        total += len(data)
        previous = lines
    return total


def _baseline(files: list[Path]) -> float:
    start = time.process_time()
    loads = orjson.loads
    for path in files:
        for raw in path.read_bytes().split(b"\n"):
            if raw:
                loads(raw)
    return time.process_time() - start


def _ours(files: list[Path]) -> float:
    reader = CodexReader()
    reader.live_seconds = 0
    start = time.process_time()
    for path in files:
        reader.read(path)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        size = write_home(home, args.mb)
        files = list(CodexReader().session_files(home / "sessions"))
        base = statistics.median(_baseline(files) for _ in range(args.repeat))
        ours = statistics.median(_ours(files) for _ in range(args.repeat))
    figure = {
        "figure": "codex-import",
        "bytes": size,
        "files": len(files),
        "ours_s": ours,
        "orjson_lines_s": base,
        "ratio": ours / base,
        "target": "<= 3x",
    }
    if args.json:
        sys.stdout.write(orjson.dumps(figure).decode() + "\n")
    else:
        sys.stdout.write(
            f"codex import of {size / 1e6:.0f} MB in {len(files)} rollouts: {ours:.2f} s; "
            f"orjson over the same lines: {base:.2f} s; ratio {ours / base:.2f} (target <= 3)\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

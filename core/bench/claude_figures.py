"""Import speed of Claude Code transcripts: `python -m forkwise.core.bench.claude_figures`.

The figure is the time `READER.read` takes on a synthetic transcript of realistic shape
(prompts, replies streamed as one entry per block, tool results with their `toolUseResult`
copy, file-history snapshots), as a ratio to the baseline of reading the file and decoding
its lines with orjson, both in CPU seconds. The target is at most 3x; nothing asserts a
time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from ..formats.claude import READER

SID = "0b5e8f1c-2d3a-4e6f-8a9b-c0d1e2f3a4b5"


def _uuid(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-{n:012x}"


def synth_transcript(path: Path, megabytes: float, tool_kb: float = 6.0) -> int:
    """Write a linear transcript of about `megabytes` MB; returns its line count."""
    base: dict[str, Any] = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/project",
        "sessionId": SID,
        "version": "2.0.77",
        "gitBranch": "main",
    }
    target = int(megabytes * 1_000_000)
    written = lines = n = 0
    parent: str | None = None
    output = "\n".join(f"line {i}: " + "x" * 60 for i in range(int(tool_kb * 15)))
    with path.open("wb") as fh:

        def put(kind: str, body: dict[str, Any], ts: int) -> None:
            nonlocal parent, written, lines, n
            n += 1
            uuid = _uuid(n)
            stamp = f"2026-01-01T{ts // 3600 % 24:02d}:{ts // 60 % 60:02d}:{ts % 60:02d}.000Z"
            entry = {"parentUuid": parent, **base, "type": kind, **body, "uuid": uuid}
            entry["timestamp"] = stamp
            raw = orjson.dumps(entry) + b"\n"
            fh.write(raw)
            written += len(raw)
            lines += 1
            parent = uuid

        turn = 0
        while written < target:
            turn += 1
            ts = turn * 10
            put("user", {"message": {"role": "user", "content": f"prompt {turn}"}}, ts)
            snap: dict[str, Any] = {
                "type": "file-history-snapshot",
                "messageId": parent,
                "snapshot": {},
            }
            raw = orjson.dumps(snap) + b"\n"
            fh.write(raw)
            written += len(raw)
            lines += 1
            mid = f"msg_{turn:020d}"
            usage: dict[str, Any] = {
                "input_tokens": 10,
                "output_tokens": 20,
                "cache_read_input_tokens": 900,
            }
            call = f"toolu_{turn:020d}"
            blocks: list[dict[str, Any]] = [
                {"type": "thinking", "thinking": "thinking " * 40, "signature": "s" * 800},
                {"type": "text", "text": f"Running step {turn}."},
                {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}},
            ]
            for block in blocks:
                message: dict[str, Any] = {"model": "claude-sonnet-4-5", "id": mid}
                message.update(type="message", role="assistant", content=[block], usage=usage)
                put("assistant", {"message": message, "requestId": f"req_{turn}"}, ts + 1)
            result = {"type": "tool_result", "tool_use_id": call, "content": output}
            body = {
                "message": {"role": "user", "content": [result]},
                "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
            }
            put("user", body, ts + 2)
            final: dict[str, Any] = {"model": "claude-sonnet-4-5", "id": mid + "b"}
            final.update(type="message", role="assistant")
            final.update(content=[{"type": "text", "text": "Done."}])
            final.update(usage=usage, stop_reason="end_turn")
            put("assistant", {"message": final}, ts + 3)
    return lines


def measure(megabytes: float, repeat: int = 3, tool_kb: float = 6.0) -> dict[str, float | int]:
    """Best of `repeat` runs of each, interleaved, in CPU seconds of this process (wall
    time on a shared machine measures the neighbours)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{SID}.jsonl"
        lines = synth_transcript(path, megabytes, tool_kb)

        def baseline() -> None:
            for raw in path.read_bytes().split(b"\n"):
                if raw:
                    orjson.loads(raw)

        ours: list[float] = []
        base: list[float] = []
        for _ in range(repeat):
            for fn, into in ((baseline, base), (lambda: READER.read(path), ours)):
                start = time.process_time()
                fn()
                into.append(time.process_time() - start)
        size = path.stat().st_size
    best, best_base = min(ours), min(base)
    return {
        "mb": round(size / 1e6, 1),
        "lines": lines,
        "ours_s": round(best, 3),
        "orjson_s": round(best_base, 3),
        "ratio": round(best / best_base, 2),
        "ratio_median": round(statistics.median(ours) / statistics.median(base), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50.0, help="size of the transcript")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tool-kb", type=float, default=6.0, help="size of each tool output")
    args = parser.parse_args()
    print(orjson.dumps(measure(args.mb, args.repeat, args.tool_kb)).decode())


if __name__ == "__main__":
    main()

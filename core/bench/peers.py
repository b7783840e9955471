"""Side by side with the peers, in one run: `python -m forkwise.core.bench --peers`.

pi (`@mariozechner/pi-coding-agent`, pinned) and Codex (`@openai/codex`, pinned; its side
is in codex_peer.py) are installed from the npm registry into a cache folder outside the
checkout the first time they are asked for. The same conversations the Forkwise figures
use (`synth.session_lines`, same seeds) are written in pi's session format (a tree of
entries: `message` with user / assistant / toolResult messages, `model_change`,
`session_info`; Forkwise's turn and step brackets have no pi equivalent), and pi's own
library does what the Forkwise figure does, each in a fresh `node` process:

- list: `SessionManager.list(cwd, dir)` (pi reads every line of every file, each time);
- fork: `SessionManager.forkFrom(file, cwd, dir)` (one appendFileSync per entry, no fsync);
- open/context: `SessionManager.open(file).buildSessionContext()` (the messages its next
  prompt would send, before pi's conversion to a provider's wire format).

Each round runs every side once, interleaved, so that a burst of load on the shared
machine hits them alike; a figure is the median of the rounds.
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.bench.app_server import npm_install
from forkwise.core.bench.codex_peer import drop_state, prepare_codex
from forkwise.core.bench.figures import process
from forkwise.core.bench.store_figures import put_index, saved_index
from forkwise.core.bench.synth import session_lines

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
PI_SPEC = f"{PI_PACKAGE}@{PI_VERSION}"

PI_SCRIPT = """
const [lib, op, a, b] = process.argv.slice(1);
const { SessionManager } = await import(lib);
if (op === "list") {
  const rows = await SessionManager.list("/work/demo", a);
  if (rows.length !== Number(b)) throw new Error(`listed ${rows.length}, wanted ${b}`);
} else if (op === "fork") {
  SessionManager.forkFrom(a, "/work/demo", b);
} else if (op === "context") {
  const ctx = SessionManager.open(a).buildSessionContext();
  if (ctx.messages.length === 0) throw new Error("no context");
}
"""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "forkwise-bench" / "npm"


def install_pi() -> Path:
    """pi's session module (only it is imported: no TUI), installed from the npm registry on
    first use."""
    folder = cache_dir() / f"pi-{PI_VERSION}"
    entry = folder / "node_modules" / PI_PACKAGE / "dist" / "core" / "session-manager.js"
    if not entry.exists():
        npm_install(folder, PI_SPEC)
    return entry


def pi_entries(lines: Iterator[bytes]) -> Iterator[bytes]:
    """A Forkwise session (header line, then events) as the lines of a pi session."""
    header = orjson.loads(next(lines))
    yield orjson.dumps(
        {
            "type": "session",
            "version": 3,
            "id": header["id"],
            "timestamp": header["created"],
            "cwd": header["cwd"],
        }
    )
    parent: str | None = None
    model = ("offline", "offline-echo")
    for n, raw in enumerate(lines, start=1):
        event = orjson.loads(raw)
        entry = _pi_entry(event, model)
        if entry is None:
            continue
        if event["type"] == "model/select":
            model = (event["provider"], event["model"])
        entry_id = f"{n:08x}"
        entry.update(id=entry_id, parentId=parent, timestamp=event["ts"])
        parent = entry_id
        yield orjson.dumps(entry)


def _pi_entry(event: dict[str, Any], model: tuple[str, str]) -> dict[str, Any] | None:
    etype = event["type"]
    if etype == "session/title":
        return {"type": "session_info", "name": event["title"]}
    if etype == "model/select":
        return {"type": "model_change", "provider": event["provider"], "modelId": event["model"]}
    if etype == "tool/result":
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": event["call"],
            "toolName": event["tool"],
            "content": [{"type": "text", "text": str(event.get("output", ""))}],
            "isError": False,
            "timestamp": 0,
        }
        return {"type": "message", "message": message}
    if etype != "message":
        return None  # turn and step brackets, plugin events: pi has none
    parts = event["parts"]
    if event["role"] == "user":
        text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
        message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}
        return {"type": "message", "message": message}
    content = [
        {"type": "text", "text": p["text"]}
        if p.get("type") == "text"
        else {"type": "toolCall", "id": p["id"], "name": p["name"], "arguments": p["args"]}
        for p in parts
        if p.get("type") in ("text", "tool_call")
    ]
    message = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": model[0],
        "model": model[1],
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if any(c["type"] == "toolCall" for c in content) else "stop",
        "timestamp": 0,
    }
    return {"type": "message", "message": message}


def write_pi_session(path: Path, lines: Iterator[bytes]) -> int:
    data = b"\n".join(pi_entries(lines)) + b"\n"
    path.write_bytes(data)
    return len(data)


def write_pi_store(root: Path, sessions: int, per: int, seed: int = 7) -> Path:
    """The conversations of `synth.write_store(…, sessions, per, seed)`, as pi sessions."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(sessions):
        sid = f"bench-{i:06d}"
        write_pi_session(
            root / f"2026-01-01T00-00-00-000Z_{sid}.jsonl", session_lines(rng, sid, per)
        )
    return root


def pi_process(entry: Path, op: str, *args: str) -> float:
    """Wall time of one fresh `node` process doing `op` through pi's library."""
    start = time.perf_counter()
    subprocess.run(
        ["node", "--input-type=module", "-e", PI_SCRIPT, "--", entry.as_uri(), op, *args],
        check=True,
    )
    return time.perf_counter() - start


OURS_LIST = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "list", "--store", sys.argv[1], "--json"],
                  out=open("/dev/null", "w")))
"""
INDEX = """
import sys
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore
store = SessionStore(JsonlBackend(sys.argv[1]))
store.list()
store.close()
"""
OURS_FORK = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "fork", "big", "--store", sys.argv[1], "--json"],
                  out=open("/dev/null", "w")))
"""
OURS_CONTEXT = """
import sys
from forkwise.core.cli import main as cli
sys.exit(cli.main(["sessions", "context", "big", "--store", sys.argv[1], "--json"],
                  out=open("/dev/null", "w")))
"""


def run_peers(tmp: Path, sessions: int, per: int, events: int, repeat: int) -> list[PeerFigure]:
    """list, fork and open/context by Forkwise's CLI, pi's library and `codex app-server`,
    interleaved: each round runs every side once."""
    from forkwise.core.bench import CHECKPOINT_SNIPPET
    from forkwise.core.bench.synth import write_store

    entry = install_pi()
    ours_root = write_store(tmp / "peers-ours", sessions, per)
    pi_root = write_pi_store(tmp / "peers-pi", sessions, per)
    codex = prepare_codex(tmp, cache_dir(), sessions, per, events)
    # the index the app (or any writer) leaves behind; `sessions list` saves it too when
    # it had none, so the run without it puts the writer's bytes back after
    process(INDEX, str(ours_root))
    index = saved_index(ours_root)
    big = tmp / "peers-big"
    (big / "sessions").mkdir(parents=True)
    ours_bytes = b"\n".join(session_lines(random.Random(11), "big", events)) + b"\n"
    (big / "sessions" / "big.jsonl").write_bytes(ours_bytes)
    process(CHECKPOINT_SNIPPET, str(big))  # as the app leaves it: index and replay checkpoint
    pi_big = tmp / "peers-pi-big.jsonl"
    pi_size = write_pi_session(pi_big, session_lines(random.Random(11), "big", events))
    pi_forks = tmp / "peers-pi-forks"
    runs: dict[str, list[float]] = {}

    def timed(name: str, took: float) -> None:
        runs.setdefault(name, []).append(took)

    for _ in range(repeat):
        timed("list-ours", process(OURS_LIST, str(ours_root)))
        timed("list-pi", pi_process(entry, "list", str(pi_root), str(sessions)))
        timed("list-codex", codex.runner.list(codex.list_home, sessions))
        timed("list-db-codex", codex.runner.list(codex.list_home, sessions, db_only=True))
        put_index(ours_root, None)
        timed("list-cold-ours", process(OURS_LIST, str(ours_root)))
        put_index(ours_root, index)
        drop_state(codex.list_home)
        timed("list-cold-codex", codex.runner.list(codex.list_home, sessions))
        timed("fork-ours", process(OURS_FORK, str(big)))
        for child in (big / "sessions").glob("*.jsonl"):
            if child.name != "big.jsonl":
                child.unlink()
        timed("fork-pi", pi_process(entry, "fork", str(pi_big), str(pi_forks)))
        for child in pi_forks.glob("*.jsonl"):
            child.unlink()
        timed("fork-codex", codex.runner.fork(codex.big_home, codex.big_id))
        codex.drop_forks()
        timed("context-ours", process(OURS_CONTEXT, str(big)))
        timed("context-pi", pi_process(entry, "context", str(pi_big)))
        timed("context-codex", codex.runner.resume(codex.big_home, codex.big_id))
        timed("read-codex", codex.runner.read(codex.big_home, codex.big_id, codex.turns))
    med = {k: sorted(v)[len(v) // 2] for k, v in runs.items()}
    big_load = (
        f"{events:,}-event session (ours {len(ours_bytes) / 1e6:.0f} MB, "
        f"pi {pi_size / 1e6:.0f} MB, codex {codex.big.stat().st_size / 1e6:.0f} MB)"
    )
    listing = f"{sessions:,} sessions / {sessions * per:,} events, fresh process"
    return [
        PeerFigure(
            "list",
            listing + " (ours: index warm; codex: SQLite state built, rollouts scanned)",
            med["list-ours"],
            med["list-pi"],
            med["list-codex"],
        ),
        PeerFigure(
            "list-db",
            listing + " (codex: useStateDbOnly, no scan of the rollouts)",
            med["list-ours"],
            None,
            med["list-db-codex"],
        ),
        PeerFigure(
            "list-cold",
            listing + " (ours: no index; codex: no SQLite state; pi never has one)",
            med["list-cold-ours"],
            med["list-pi"],
            med["list-cold-codex"],
        ),
        PeerFigure(
            "fork",
            big_load + ", fresh process",
            med["fork-ours"],
            med["fork-pi"],
            med["fork-codex"],
        ),
        PeerFigure(
            "context",
            big_load + ", fresh process: open it and build the next prompt's messages "
            "(codex: thread/resume)",
            med["context-ours"],
            med["context-pi"],
            med["context-codex"],
        ),
        PeerFigure(
            "context-read",
            big_load + ", fresh process (codex: thread/read with every turn sent back)",
            med["context-ours"],
            None,
            med["read-codex"],
        ),
    ]


@dataclass
class PeerFigure:
    name: str
    workload: str
    ours: float
    pi: float | None
    codex: float | None

    def ahead(self) -> dict[str, float]:
        """How many times longer each peer took (> 1: Forkwise is ahead)."""
        peers = {"pi": self.pi, "codex": self.codex}
        return {
            name: (took / self.ours if self.ours else float("inf"))
            for name, took in peers.items()
            if took is not None
        }

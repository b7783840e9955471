"""pi's own SessionManager, run with node, for the tests that compare Forkwise with pi.

`@mariozechner/pi-coding-agent` is installed once, exactly as pinned by
`pi_node/package-lock.json`, into a cache folder outside the checkout
(`$XDG_CACHE_HOME/forkwise-tests/npm/pi-<version>-<lock digest>`, else under
`~/.cache`). Without node or npm, or when the registry cannot be reached, the tests that
need it fail (they are not skipped): CI must run them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

PI_VERSION = "0.73.1"
HERE = Path(__file__).resolve().parent / "pi_node"
HARNESS = HERE / "harness.mjs"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    lock = hashlib.sha256((HERE / "package-lock.json").read_bytes()).hexdigest()[:12]
    return Path(base) / "forkwise-tests" / "npm" / f"pi-{PI_VERSION}-{lock}"


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        pytest.fail(f"{tool} is not installed: the pi compatibility tests need node and npm")
    return found


def ensure_pi() -> Path:
    """The folder whose node_modules hold the pinned pi, installing it on first use."""
    _need("node")
    target = cache_dir()
    marker = target / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
    if not marker.is_file():
        npm = _need("npm")
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".pi-install-", dir=target.parent))
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(HERE / name, work / name)
        done = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            pytest.fail(
                f"npm ci of @mariozechner/pi-coding-agent@{PI_VERSION} failed:\n{done.stderr[-2000:]}"
            )
        try:
            work.rename(target)
        except OSError:  # another test process installed it meanwhile
            shutil.rmtree(work, ignore_errors=True)
    version = json.loads(marker.read_text())["version"]
    assert version == PI_VERSION, f"cached pi is {version}, expected {PI_VERSION}"
    return target


def run(modules: Path, command: str, *args: str | Path, agent_dir: Path | None = None) -> Any:
    """Run one harness command and return its JSON output."""
    env = dict(os.environ, PI_MODULES=str(modules))
    if agent_dir is not None:
        env["PI_CODING_AGENT_DIR"] = str(agent_dir)
    done = subprocess.run(
        [_need("node"), str(HARNESS), command, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"node harness {command} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def pi_messages(context: dict[str, Any]) -> list[tuple[Any, ...]]:
    """pi's context messages (buildSessionContext) in a shape both sides can be put in."""
    out: list[tuple[Any, ...]] = []
    for m in context["messages"]:
        role = m["role"]
        if role == "user":
            content = m["content"]
            text = (
                content
                if isinstance(content, str)
                else "".join(b.get("text", "") for b in content if b.get("type") == "text")
            )
            out.append(("user", text))
        elif role == "assistant":
            text = "".join(b["text"] for b in m["content"] if b["type"] == "text")
            calls = [
                (b["id"], b["name"], b["arguments"])
                for b in m["content"]
                if b["type"] == "toolCall"
            ]
            out.append(("assistant", text, calls))
        elif role == "toolResult":
            text = "\n".join(b["text"] for b in m["content"] if b["type"] == "text")
            out.append(("tool", m["toolCallId"], text, bool(m["isError"])))
        elif role == "bashExecution":
            out.append(("bash", m["command"], m["output"]))
        elif role == "compactionSummary":
            out.append(("summary", m["summary"]))
        elif role == "branchSummary":
            out.append(("branch-summary", m["summary"]))
        # custom messages (extensions) are plugin events in Forkwise, not messages
    return out


def forkwise_messages(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The same shape from Forkwise events, applying a context/summary's `through` (and
    the branch summaries pi shows the model) as pi's buildSessionContext does."""
    out: list[tuple[tuple[Any, ...], int]] = []
    bash_calls: set[str] = set()
    for seq, e in enumerate(events, start=1):
        etype = e["type"]
        if etype == "message":
            text = "".join(p["text"] for p in e["parts"] if p["type"] == "text")
            calls = [
                (p["id"], p["name"], p["args"]) for p in e["parts"] if p["type"] == "tool_call"
            ]
            if e["role"] == "user":
                if text.startswith("!"):
                    continue  # a bash turn: its tool/result stands for it
                out.append((("user", text), seq))
            elif calls and all(c[0].startswith("bash-") for c in calls) and not text:
                bash_calls.update(c[0] for c in calls)
            else:
                out.append((("assistant", text, calls), seq))
        elif etype == "tool/result":
            if e["call"] in bash_calls:
                out.append((("bash", _bash_command(events, e["call"]), e["output"]), seq))
            else:
                out.append((("tool", e["call"], e["output"], bool(e.get("error"))), seq))
        elif etype == "context/branch-summary":
            out.append((("branch-summary", e["text"]), seq))
        elif etype == "context/summary":
            through = e.get("through", 0)
            kept = [(m, s) for m, s in out if s > through]
            out = [(("summary", e["text"]), seq), *kept]
    return [m for m, _ in out]


def _bash_command(events: list[dict[str, Any]], call: str) -> str:
    for e in events:
        if e["type"] == "message":
            for p in e["parts"]:
                if p["type"] == "tool_call" and p["id"] == call:
                    return str(p["args"]["command"])
    raise KeyError(call)

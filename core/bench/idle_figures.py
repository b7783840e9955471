"""Idle is idle: the CPU a host spends while it watches the agents' folders and nothing
changes in them, followed with inotify, against the same folders polled every 1.5 s (how
they were watched before). Each side is a fresh process over a home holding Claude Code,
Codex, Gemini CLI and OpenCode histories; after its first pass has imported them it sits
for the window, and its own CPU time (all threads, `getrusage`) over that window is
the figure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from forkwise.core.bench import process_env
from forkwise.core.bench.figures import Figure

IDLE_SNIPPET = """
import asyncio, resource, sys, time
from forkwise.core.host.host import Host

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

async def main():
    store, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    host = Host.open(store)
    host.sources.use_inotify = mode == "inotify"
    try:
        await host.watch_sources(["claude", "codex", "pi", "gemini", "opencode"])
        assert host.sources.kind == mode, host.sources.kind
        await asyncio.sleep(2.0)  # the first pass's leftovers (the store's own work) done
        start, began, passes = cpu(), time.monotonic(), host.sources.passes
        await asyncio.sleep(seconds)
        print(cpu() - start, time.monotonic() - began, host.sources.passes - passes)
    finally:
        await host.close()

asyncio.run(main())
"""

#: the window a watcher sits idle in, seconds (`quick`: a smoke run)
WINDOW = 30.0
QUICK_WINDOW = 4.0
#: the target: 0.2 % of one core
TARGET_SHARE = 0.002


def agents_home(home: Path, megabytes: float, claude_files: int) -> int:
    """The four tools' histories under `home` (as their default folders): `claude_files`
    short Claude Code sessions, about `megabytes` MB each of the others; the number of
    session files written (the OpenCode database counting as one)."""
    from forkwise.core.bench.synth_agents import gemini_home, opencode_db
    from forkwise.core.bench.synth_sources import claude_projects, codex_home

    files = len(claude_projects(home / ".claude", sessions=claude_files, turns=4))
    codex_home(home / ".codex", megabytes)
    files += len(list((home / ".codex").rglob("*.jsonl")))
    files += len(gemini_home(home, megabytes))
    opencode_db(home / ".local" / "share" / "opencode" / "opencode.db", megabytes)
    return files + 1


def home_env(home: Path) -> dict[str, str]:
    """A measured process's environment: `home` is its home, for every tool."""
    return process_env(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CODEX_HOME=str(home / ".codex"),
        PI_CODING_AGENT_DIR=str(home / ".pi" / "agent"),
        GEMINI_CLI_HOME=str(home),
    )


def idle_cpu(home: Path, store: Path, mode: str, seconds: float) -> tuple[float, float, int]:
    """CPU seconds of a watching host over `seconds` idle, the window's length and the
    passes it made meanwhile."""
    argv = [sys.executable, "-c", IDLE_SNIPPET, str(store), mode, str(seconds)]
    done = subprocess.run(
        argv, check=False, env=home_env(home), capture_output=True, text=True, cwd=str(home)
    )
    if done.returncode != 0:
        raise RuntimeError(f"the idle watcher failed ({done.returncode}):\n{done.stderr[-4000:]}")
    cpu, window, passes = done.stdout.split()
    return float(cpu), float(window), int(passes)


def bench_idle(tmp: Path, megabytes: float, claude_files: int, quick: bool) -> list[Figure]:
    home = tmp / "idle-home"
    files = agents_home(home, megabytes, claude_files)
    window = QUICK_WINDOW if quick else WINDOW
    ours, took, passes = idle_cpu(home, tmp / "idle-store-inotify", "inotify", window)
    base, base_took, base_passes = idle_cpu(home, tmp / "idle-store-poll", "poll", window)
    target = TARGET_SHARE * took
    print(
        f"idle watch: inotify {ours:.3f} CPU s over {took:.1f} s ({ours / took:.3%} of a core, "
        f"{passes} passes); polled {base:.3f} CPU s over {base_took:.1f} s "
        f"({base / base_took:.3%}, {base_passes} passes)",
        file=sys.stderr,
    )
    workload = (
        f"a host watching {files:,} agent session files (Claude Code, Codex, Gemini CLI, "
        f"OpenCode), idle {took:.0f} s: CPU s (followed with inotify)"
    )
    return [
        Figure(
            "idle-watch",
            workload,
            ours,
            base,
            "the same folders polled every 1.5 s (before), CPU s",
            f"<= {target:.3f} s (0.2%)",
        )
    ]


if __name__ == "__main__":  # a run of its own: python -m forkwise.core.bench.idle_figures
    import tempfile

    with tempfile.TemporaryDirectory(prefix="forkwise-idle-") as folder:
        for f in bench_idle(Path(folder), 5, 500, False):
            print(f"{f.name}: {f.ours:.3f} s vs {f.baseline:.3f} s ({f.ratio:.2f}x) {f.target}")

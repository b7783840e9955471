"""The whole app idle, and its quit: the app's process (`forkwise.gui.app.app.run`,
offscreen, its window shown, a store open, the agents' folders of a home holding Claude
Code, Codex, Gemini CLI and OpenCode histories watched) left alone once its start-up work
(the first look's import, the search index's build) is over; its CPU over the window
against the target (0.2 % of a core); an empty Qt window's process idle as long beside
it is said too (the cost of Qt alone).
Then its window is closed: window closed to process gone is the quit figure.

Measured by `python -m forkwise.gui.bench.perf idle` (core never imports Qt)."""

from __future__ import annotations

import sys
from pathlib import Path

from forkwise.core.bench.figures import Figure
from forkwise.core.bench.gui_figures import gui_missing, read_perf, start_perf
from forkwise.core.bench.idle_figures import TARGET_SHARE, agents_home, home_env

#: the idle window, seconds (`quick`: a smoke run)
WINDOW = 60.0
QUICK_WINDOW = 20.0
#: window closed to process gone, seconds at most
QUIT_TARGET = 0.3


def bench_app_idle(tmp: Path, megabytes: float, claude_files: int, quick: bool) -> list[Figure]:
    missing = gui_missing()
    if missing:
        print(f"bench: app idle figures skipped: {missing} (install the gui extra)",
              file=sys.stderr)  # fmt: skip
        return []
    home = tmp / "app-idle-home"
    files = agents_home(home, megabytes, claude_files)
    window = QUICK_WINDOW if quick else WINDOW
    env = home_env(home)
    seconds = ["--seconds", str(window)]
    # side by side: both idle, neither takes the machine from the other
    ours = start_perf("idle", "--store", str(tmp / "app-idle-store"), *seconds, env=env)
    empty = start_perf("idle-baseline", *seconds, env=env)
    app, base = read_perf(ours), read_perf(empty)
    if app["status"] != 0:
        raise RuntimeError(f"the app ended with {app['status']}")
    took, base_took = float(app["seconds"]), float(base["seconds"])
    cpu, base_cpu = float(app["cpu_seconds"]), float(base["cpu_seconds"])
    quit_seconds = float(app["exited_at"]) - float(app["closed_at"])
    print(
        f"app idle: {cpu:.3f} CPU s over {took:.1f} s ({cpu / took:.3%} of a core; its main "
        f"thread woken {app['main_wakeups_per_second']:.0f} times a second; start-up "
        f"{app['start_seconds']:.1f} s); an empty window {base_cpu:.3f} CPU s over "
        f"{base_took:.1f} s ({base_cpu / base_took:.3%}, woken "
        f"{base['main_wakeups_per_second']:.1f} times a second); quit {quit_seconds:.3f} s "
        f"(the app's loop ended {float(app['returned_at']) - float(app['closed_at']):.3f} s "
        "after the close)",
        file=sys.stderr,
    )
    return [
        Figure(
            "app-idle",
            f"the app (offscreen window, a store open, {files:,} agent session files "
            f"watched), idle {took:.0f} s after its start-up: CPU s of its process",
            cpu,
            TARGET_SHARE * took,
            f"the {TARGET_SHARE:.1%}-of-a-core target, CPU s (an empty Qt window's process: "
            f"{base_cpu:.3f} s)",
            f"<= {TARGET_SHARE * took:.3f} s ({TARGET_SHARE:.1%} of a core)",
        ),
        Figure(
            "app-quit",
            "the same app's window closed until its process is gone",
            quit_seconds,
            QUIT_TARGET,
            "the 300 ms target",
            f"<= {QUIT_TARGET * 1000:.0f} ms",
        ),
    ]


if __name__ == "__main__":  # a run of its own: python -m forkwise.core.bench.app_idle_figures
    import tempfile

    with tempfile.TemporaryDirectory(prefix="forkwise-app-idle-") as folder:
        for f in bench_app_idle(Path(folder), 5, 640, "--quick" in sys.argv):
            print(f"{f.name}: {f.ours:.3f} vs {f.baseline:.3f} ({f.ratio:.2f}x) {f.target}")

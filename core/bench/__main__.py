"""Run the benchmark suite: `python -m forkwise.core.bench [--quick] [--json] [--repeat N]`.

`--only gui` runs the GUI figures (open transcript, cold start, tree; `--only app-idle` the
app idle and its quit) through
`python -m forkwise.gui.bench.perf` in processes of their own; without PySide6 they are skipped
with a note on stderr."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from forkwise.core.bench.figures import Figure, median, process
from forkwise.core.bench.store_figures import (
    FORK_SNIPPET,
    LIST_SNIPPET,
    bench_append,
    bench_context,
    bench_fork,
    bench_list,
)
from forkwise.core.bench.synth import (
    write_store,
)

FIGURE_GROUPS = [
    "list", "fork", "context", "append", "host", "import", "search", "export", "gui",
    "transcript", "postgres", "idle", "app-idle", "rewinds-store",
]


def bench_host(tmp: Path, sessions: int, turns: int, repeat: int) -> list[Figure]:
    from forkwise.core.bench.host_figures import run_host_turns

    runs = [run_host_turns(tmp, sessions, turns) for _ in range(repeat)]
    took = statistics.median(r[0] for r in runs)
    raw = statistics.median(r[1] for r in runs)
    events = runs[0][2]
    return [
        Figure(
            "append-host",
            f"{sessions} sessions x {turns} offline turns through host+client "
            f"({events / took:,.0f} events/s)",
            took,
            raw,
            f"raw write+fsync, one batch per turn ({events / raw:,.0f} events/s)",
            ">= 20,000 events/s",
        )
    ]


def bench_search(tmp: Path, sessions: int, per: int, repeat: int) -> list[Figure]:
    from forkwise.core.bench.search_figures import QUERY, run_search, run_search_after_import

    root = write_store(tmp / "search-store", sessions, per, seed=13)
    query, build, parse, hits = run_search(root, repeat)
    imported = max(20, sessions // 5)  # Claude Code sessions of 6 turns: 2,000 of 10,000
    first, again, built = run_search_after_import(tmp, imported, repeat)
    load = f"{sessions:,} sessions / {sessions * per:,} events"
    return [
        Figure(
            "search",
            f"the word {QUERY!r} over {load} through host+client, index warm ({hits} hits)",
            query,
            0.1,
            "the 100 ms target (the issue sets no baseline)",
            "< 100 ms",
        ),
        Figure(
            "search-build",
            f"the search index made from the logs of {load}",
            build,
            parse,
            "read every log and decode each line with orjson",
            "<= 3x",
        ),
        Figure(
            "search-after-import",
            f"the first search after an import of {imported:,} Claude Code sessions, through"
            f" host+client, its index built in the background meanwhile ({built:.2f} s)",
            first,
            again,
            "the same search again",
            "<= 2x, < 100 ms",
        ),
    ]


def bench_import(tmp: Path, sizes: dict[str, int], repeat: int) -> list[Figure]:
    from forkwise.core.bench import import_figures as im

    out: list[Figure] = []
    agents = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI",
              "opencode": "OpenCode"}  # fmt: skip
    reimports: list[Figure] = []
    for name, tool, make in (
        ("import", "claude", im.claude_tree),
        ("import-codex", "codex", im.codex_tree),
        ("import-gemini", "gemini", im.gemini_tree),
        ("import-opencode", "opencode", im.opencode_tree),
    ):
        root, files = make(tmp, sizes[f"{name}_mb"])
        size, lines = im.tree_size(files)
        (ours, ours_cpu), (base, base_cpu), (durable_wall, durable_cpu) = im.measure_import(
            tmp, tool, root, repeat
        )
        agent = agents[tool]
        if tool == "opencode":
            load = f"a {size / 1e6:.0f} MB OpenCode database"
            parse = "read every row read-only, orjson.loads every JSON column (fresh process)"
        else:
            load = (
                f"{size / 1e6:.0f} MB of {agent} sessions ({len(files):,} files, {lines:,} lines)"
            )
            parse = "read the files, orjson.loads every line (fresh process)"
        workload = f"`sessions import` of {load}, fresh process, empty store"
        out.append(Figure(name, workload, ours, base, parse, "<= 3x"))
        if tool != "opencode":  # the durable floor copies JSON Lines files: none here
            # the floor beside the import: what storing the same files durably costs at
            # least (no mapping, no checks), against the same parse
            out.append(Figure(
                f"{name}-floor",
                "durable copy: the parse + one event a line encoded, each file written and "
                "fsynced, fresh process",
                durable_wall, base, parse, "(the floor)",
            ))  # fmt: skip
        # CPU seconds too, for both tools: the neighbours on a shared machine inflate wall time
        cpu = "the same, CPU seconds (user + system) of the process"
        name_cpu = "import-cpu" if tool == "claude" else f"{name}-cpu"
        out.append(Figure(name_cpu, cpu, ours_cpu, base_cpu, parse + ", CPU s", "<= 3x"))
        durable = "the parse + one event a line encoded, each file written and fsynced, CPU s"
        if tool != "opencode":  # the durable floor copies JSON Lines files: none here
            out.append(Figure(
                f"{name}-durable-cpu", cpu, ours_cpu, durable_cpu, durable, "(vs floor)"
            ))  # fmt: skip
        if tool in ("gemini", "opencode"):
            (again, _), (stats, _) = im.measure_reimport_of(
                tool, root, tmp / f"reimport-{tool}-store", repeat
            )
            reimports.append(Figure(
                f"re{name}", f"import again of {load}, unchanged: the verb as the host runs it",
                again, stats, "walk the folder and stat every file", "<= 5x, < 1 s",
            ))  # fmt: skip
            shutil.rmtree(tmp / f"reimport-{tool}-store")
        shutil.rmtree(root if tool != "opencode" else root.parent.parent)
    inproc, cli = im.measure_reimport(tmp, sizes["reimport_files"], repeat)
    tree = f"an unchanged tree of {sizes['reimport_files']:,} Claude Code session files"
    stat = "walk the tree and stat every file"
    return [
        *out,
        *reimports,
        Figure("reimport", f"import of {tree}: the verb as the host runs it (store just opened)",
               inproc[0][0], inproc[1][0], stat, "<= 5x, < 1 s"),
        Figure("reimport-cli", f"`sessions import` of {tree}, fresh process",
               cli[0][0], cli[1][0], stat + " (fresh process)", "< 1 s"),
    ]  # fmt: skip


def bench_export(tmp: Path, megabytes: float, repeat: int) -> list[Figure]:
    from forkwise.core.bench.export_figures import run_export

    ours, base, size, lines = run_export(tmp, repeat, megabytes)
    parse = "read its source file and orjson.loads every line"
    html, md = ours["html"], ours["markdown"]
    return [
        Figure(
            "export-html",
            f"`sessions export --to html` of a {size / 1e6:.1f} MB, {lines:,}-line Claude Code "
            "session (the store's log read, folded, rendered, written)",
            html[0],
            base[0],
            parse,
            "<= 3x",
        ),
        Figure("export-html-cpu", "the same, CPU seconds of the process", html[1], base[1],
               parse + ", CPU s", "<= 3x"),
        Figure("export-md", "`sessions export --to markdown` of the same session", md[0],
               base[0], parse, ""),
        Figure("export-md-cpu", "the same, CPU seconds of the process", md[1], base[1],
               parse + ", CPU s", ""),
    ]


def bench_transcript(tmp: Path, megabytes: float, repeat: int) -> list[Figure]:
    from forkwise.core.bench import gui_figures as g

    missing = g.gui_missing()
    if missing:
        print(f"bench: GUI figures skipped: {missing} (install the gui extra)", file=sys.stderr)
        return []
    runs = g.run_transcript(tmp, megabytes, repeat)
    mb = runs[0]["file_bytes"] / 1e6
    frames = int(min(r["scroll_frames"] for r in runs))
    return [
        Figure(
            "transcript-open",
            f"window asked to open an imported {megabytes:.0f} MB Claude Code session "
            f"(its log {mb:.0f} MB) until its first transcript screen is painted",
            g.median(runs, "seconds"),
            0.15,
            "the 150 ms target",
            "<= 150 ms",
        ),
        Figure(
            "transcript-open-cpu",
            "the same: the GUI thread's CPU time (the host reads on its own threads)",
            g.median(runs, "gui_cpu_seconds"),
            0.15,
            "the 150 ms target",
            "<= 150 ms",
        ),
        Figure(
            "transcript-scroll",
            f"slowest of {frames} page-up scrolls of it from its end, each painted (cards "
            "laid out on their first showing)",
            g.median(runs, "scroll_frame_max"),
            1 / 60,
            "one 60 Hz frame",
            "<= 1 frame",
        ),
        Figure(
            "transcript-scroll-median",
            "the same scrolls: the median frame",
            g.median(runs, "scroll_frame_median"),
            1 / 60,
            "one 60 Hz frame",
            "<= 1 frame",
        ),
        Figure(
            "transcript-scroll-cpu",
            "the same scrolls: the slowest one's CPU time on the GUI thread",
            g.median(runs, "scroll_frame_cpu_max"),
            1 / 60,
            "one 60 Hz frame",
            "<= 1 frame",
        ),
    ]


def bench_gui(tmp: Path, sizes: dict[str, int], repeat: int) -> list[Figure]:
    from forkwise.core.bench import gui_figures as g

    missing = g.gui_missing()
    if missing:
        print(f"bench: GUI figures skipped: {missing} (install the gui extra)", file=sys.stderr)
        return []
    opens = g.run_open(tmp, sizes["open"], repeat)
    cold, empty, trees = g.run_cold_and_tree(tmp, sizes["sessions"], sizes["per"], repeat)
    mb = opens[0]["file_bytes"] / 1e6
    store = f"{sizes['sessions']:,}-session store (index warm)"
    return [
        Figure(
            "open",
            f"window asked to open a {sizes['open']:,}-event session ({mb:.0f} MB) "
            "until its first transcript screen is painted",
            g.median(opens, "seconds"),
            0.3,
            "the 300 ms target (the issue sets no baseline)",
            "<= 300 ms",
        ),
        Figure(
            "open-rss",
            "peak RSS growth while opening it",
            g.median(opens, "rss_peak_growth"),
            g.median(opens, "file_bytes"),
            "the session file's size",
            "<= 3x",
            "B",
        ),
        Figure(
            "cold-start",
            f"process start to the window painted with its tree rows (those the index "
            f"vouches for, while the host opens), {store}",
            g.median(cold, "tree_painted"),
            g.median(empty, "painted"),
            "process start to an empty QMainWindow painted",
            "<= 2x",
        ),
        Figure(
            "cold-ready",
            f"process start to the host's listing in the tree (a session can be opened), {store}",
            g.median(cold, "ready"),
            g.median(empty, "painted"),
            "process start to an empty QMainWindow painted",
            "(none set)",
        ),
        Figure(
            "cold-frame",
            f"process start to the window's first paint (tree maybe empty), {store}",
            g.median(cold, "painted"),
            g.median(empty, "painted"),
            "process start to an empty QMainWindow painted",
            "<= 1.3x",
        ),
        Figure(
            "tree",
            f"{sizes['sessions']:,} sessions into the lineage tree until painted (first page)",
            g.median(trees, "seconds"),
            0.2,
            "the 200 ms target (the issue sets no baseline)",
            "<= 200 ms",
        ),
        Figure(
            "tree-rest",
            "the rows after the first page, handed to the view right after that frame, "
            "until painted",
            g.median(trees, "rest_seconds"),
            0.2,
            "the 200 ms target of the tree",
            "<= 200 ms",
        ),
        Figure(
            "tree-scroll",
            "slowest of 30 page-down scrolls of that tree (every row fetched), each painted",
            g.median(trees, "scroll_frame_max"),
            1 / 60,
            "one 60 Hz frame",
            "<= 1 frame",
        ),
        Figure(
            "tree-scroll-cpu",
            "the same scrolls: the slowest one's CPU time on the GUI thread (its wall "
            "time above includes waiting for a core on a loaded machine)",
            g.median(trees, "scroll_frame_cpu_max"),
            1 / 60,
            "one 60 Hz frame",
            "<= 1 frame",
        ),
    ]


def _cell(value: float, unit: str) -> str:
    return f"{value / 1e6:>7.1f}MB" if unit == "B" else f"{value:>8.3f}s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m forkwise.core.bench")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of seconds")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--repeat", type=int, default=0, help="runs per figure (median reported)")
    parser.add_argument("--only", choices=FIGURE_GROUPS, action="append")
    parser.add_argument(
        "--postgres",
        metavar="URL",
        default=os.environ.get("FORKWISE_BENCH_POSTGRES"),
        help="a database for the PostgreSQL figures (a schema of its own is made and dropped)",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also run list, fork and open/context through pi's library and codex app-server, "
        "side by side (installs both from the npm registry into a cache folder on first use)",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        help="sessions in the stores of list, search, gui, postgres and --peers (10,000)",
    )
    parser.add_argument("--per", type=int, help="events per session in those stores (100)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (2 if args.quick else 5)
    sizes = (
        {
            "sessions": 200,
            "per": 100,
            "fork": 5_000,
            "turns": 100,
            "host_sessions": 2,
            "host_turns": 5,
            "open": 5_000,
            "import_mb": 2,
            "import-codex_mb": 2,
            "import-gemini_mb": 2,
            "import-opencode_mb": 2,
            "reimport_files": 50,
            "export_mb": 1,
            "idle_mb": 1,
            "idle_claude": 50,
            "app_idle_claude": 640,
            "rewinds": 150,
        }
        if args.quick
        else {
            "sessions": 10_000,
            "per": 100,
            "fork": 100_000,
            "turns": 2_000,
            "host_sessions": 8,
            "host_turns": 50,
            "open": 100_000,
            "import_mb": 200,
            "import-codex_mb": 200,
            "import-gemini_mb": 200,
            "import-opencode_mb": 200,
            "reimport_files": 2_000,
            "export_mb": 9,
            "idle_mb": 5,
            "idle_claude": 640,
            "app_idle_claude": 640,
            "rewinds": 1_500,
        }
    )
    sizes.update((k, v) for k, v in (("sessions", args.sessions), ("per", args.per)) if v)
    only = set(args.only or FIGURE_GROUPS)
    figures: list[Figure] = []
    peers: list[Any] = []
    tmp = Path(tempfile.mkdtemp(prefix="forkwise-bench-"))
    try:
        if "list" in only:
            figures += bench_list(tmp, sizes["sessions"], sizes["per"], repeat)
        if "fork" in only:
            figures += bench_fork(tmp, sizes["fork"], repeat)
        if "context" in only:
            figures += bench_context(tmp, sizes["fork"], repeat)
        if "append" in only:
            figures += bench_append(tmp, sizes["turns"], repeat)
        if "host" in only:
            figures += bench_host(tmp, sizes["host_sessions"], sizes["host_turns"], repeat)
        if "search" in only:
            figures += bench_search(tmp, sizes["sessions"], sizes["per"], repeat)
        if "import" in only:
            figures += bench_import(tmp, sizes, repeat)
        if "export" in only:
            figures += bench_export(tmp, sizes["export_mb"], repeat)
        if "gui" in only:
            figures += bench_gui(tmp, sizes, repeat)
        if "transcript" in only:
            figures += bench_transcript(tmp, sizes["export_mb"], repeat)
        if "idle" in only:
            from forkwise.core.bench.idle_figures import bench_idle

            figures += bench_idle(tmp, sizes["idle_mb"], sizes["idle_claude"], args.quick)
        if "rewinds-store" in only:
            from forkwise.core.bench.rewind_figures import bench_rewinds

            figures += bench_rewinds(tmp, sizes["rewinds"])
        if "app-idle" in only:
            from forkwise.core.bench.app_idle_figures import bench_app_idle

            figures += bench_app_idle(tmp, sizes["idle_mb"], sizes["app_idle_claude"], args.quick)
        if "postgres" in only and args.postgres:
            from forkwise.core.bench.pg_figures import bench_postgres

            snippets = {"list": LIST_SNIPPET, "fork": FORK_SNIPPET}
            figures += bench_postgres(
                tmp,
                args.postgres,
                sizes=sizes,
                repeat=repeat,
                figure=Figure,
                process=process,
                median=median,
                jsonl_snippets=snippets,
            )
        elif "postgres" in only:
            print("PostgreSQL figures skipped: no --postgres URL", file=sys.stderr)
        if args.peers:
            from forkwise.core.bench.peers import run_peers

            peers = run_peers(tmp, sizes["sessions"], sizes["per"], sizes["fork"], repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(
            orjson.dumps(
                [asdict(f) | {"ratio": f.ratio} for f in figures]
                + [asdict(p) | {"ahead": p.ahead()} for p in peers],
                option=orjson.OPT_INDENT_2,
            ).decode()
        )
    else:
        wide = max([16, *(len(f.name) for f in figures)])  # every row's columns in line
        head = f"{'figure':<{wide}} {'ours':>9} {'baseline':>9} {'ratio':>7}  {'target':<13} "
        print(head + "workload / baseline")
        for f in figures:
            cells = f"{_cell(f.ours, f.unit)} {_cell(f.baseline, f.unit)}"
            row = f"{f.name:<{wide}} {cells} {f.ratio:>6.2f}x  "
            print(f"{row}{f.target:<13} {f.workload}\n{'':<{len(head)}}vs {f.baseline_name}")
        if peers:
            heads = f"{'forkwise':>9} {'pi':>9} {'codex':>9} {'pi/fw':>7} {'cx/fw':>7}"
            print(f"\n{'peers':<13} {heads}")
            for p in peers:
                ahead = p.ahead()
                cells = " ".join(
                    _cell(t, "s") if t is not None else f"{'-':>9}" for t in (p.ours, p.pi, p.codex)
                )
                ratios = " ".join(
                    f"{ahead[k]:>6.2f}x" if k in ahead else f"{'-':>7}" for k in ("pi", "codex")
                )
                print(f"{p.name:<13} {cells} {ratios}\n{'':<14}{p.workload}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

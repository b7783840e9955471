"""What sessions cost, in the app: the list's Cost column (a session's own cost, its tokens
in the row's tooltip) and a lineage's total with the shared prefix counted once, over a
real host and store holding imported Claude Code sessions (a rewound one: a main line and
a branch that share their first turns; one of a model without a price)."""

from __future__ import annotations

import io
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from claude_fixtures import MODEL, SID, Transcript, rewound
from genai_prices import calc_price
from genai_prices.types import Usage
from gui_harness import open_app, until
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from forkwise.core.cli import main as cli
from forkwise.gui.models.session_rows import COST, TITLE

pytestmark = pytest.mark.gui

OTHER = "7d0c0c0c-1111-4222-8333-944444444444"
DAY = "2026-01-05"  # the fixture's clock
#: a folder to save screenshots in (FORKWISE_SHOTS), else none are taken
SHOTS = os.environ.get("FORKWISE_SHOTS", "")
TOKENS = ("input", "output", "cacheRead", "cacheWrite")


def cli_json(*argv: str) -> Any:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main([*argv, "--json"], out=out, err=err) == 0, err.getvalue()
    return orjson.loads(out.getvalue())


def raw_counts(path: Path) -> dict[str, int]:
    """The file's tokens, each reply once (the last line of a message id counts)."""
    per: dict[str, dict[str, int]] = {}
    for line in path.read_bytes().splitlines():
        entry = orjson.loads(line)
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) and "usage" in message:
            u = message["usage"]
            per[message["id"]] = {
                "input": u["input_tokens"], "output": u["output_tokens"],
                "cacheRead": u.get("cache_read_input_tokens", 0),
                "cacheWrite": u.get("cache_creation_input_tokens", 0),
            }
    return {k: sum(p[k] for p in per.values()) for k in TOKENS}


def library_cost(t: dict[str, int]) -> float:
    usage = Usage(input_tokens=t["input"] + t["cacheRead"] + t["cacheWrite"],
                  cache_read_tokens=t["cacheRead"], cache_write_tokens=t["cacheWrite"],
                  output_tokens=t["output"])
    when = datetime.fromisoformat(DAY).replace(tzinfo=UTC)
    return float(calc_price(usage, MODEL, genai_request_timestamp=when).total_price)


def imported_store(root: Path) -> tuple[Path, str, str, str]:
    """A store with a rewound Claude Code session (main line + branch) and one of a model
    the price table lacks; its folder, the main id, the branch id, the unpriced id."""
    claude = root / "claude"
    t = Transcript(SID)
    t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    rewound(t)
    path = t.write(claude / f"{SID}.jsonl")
    other = Transcript(OTHER)
    other.exchange("hello", "hi", model="claude-made-up-9")
    other_path = other.write(claude / f"{OTHER}.jsonl")
    store = root / "store"
    report = cli_json("sessions", "import", "--from", "claude", str(path), "--store", str(store))
    cli_json("sessions", "import", "--from", "claude", str(other_path), "--store", str(store))
    main = f"claude-{SID}"
    (branch,) = [sid for sid in report["imported"] if sid != main]
    return path, main, branch, f"claude-{OTHER}"


def cell(app: Any, sid: str, column: int, role: Qt.ItemDataRole = Qt.ItemDataRole.DisplayRole
         ) -> Any:
    tree = app.controller.tree
    index = tree.index_for(sid)
    return tree.data(index.siblingAtColumn(column), role)


def test_the_list_shows_each_sessions_own_cost_and_a_lineage_total(
    aloop: Any, tmp_path: Path
) -> None:
    path, main, branch, unpriced = imported_store(tmp_path)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await until(lambda: cell(app, main, COST) not in (None, "—"), what="costs listed")
            header = app.window.tree.header()
            assert not header.isSectionHidden(COST)
            assert app.controller.tree.headerData(COST, Qt.Orientation.Horizontal) == "Cost"
            main_u = await app.client.usage(main)
            branch_u = await app.client.usage(branch)
            # the cell is the session's own cost, in dollars
            assert main_u["own"]["cost"] > 0
            assert cell(app, main, COST) == f"${main_u['own']['cost']:.4f}" \
                or cell(app, main, COST) == f"${main_u['own']['cost']:,.2f}"
            assert branch_u["shared"]["input"] > 0  # the branch copied the first turns
            assert branch_u["own"]["cost"] < branch_u["total"]["cost"]
            # tokens in the tooltip
            tip = cell(app, branch, TITLE, Qt.ItemDataRole.ToolTipRole)
            assert f"{branch_u['own']['output']:,} out" in tip
            # a model without a price: its tokens, and "no price"
            assert cell(app, unpriced, COST) == "no price"
            assert "10 in" in cell(app, unpriced, TITLE, Qt.ItemDataRole.ToolTipRole)
            # the lineage's total counts the shared prefix once: the file's replies, each
            # once, priced by the library
            root_tip = cell(app, main, TITLE, Qt.ItemDataRole.ToolTipRole)
            raw = raw_counts(path)
            expected = library_cost(raw)
            line = next(x for x in root_tip.splitlines() if x.startswith("Lineage of 2"))
            assert f"{sum(raw.values()):,} tokens" in line
            shown = float(line.split("$")[1].split(",")[0].split(" ")[0])
            assert shown == pytest.approx(expected, abs=1e-4 if expected < 0.01 else 0.006)

    aloop(scenario())


def test_a_forks_header_says_what_its_shared_prefix_cost(aloop: Any, tmp_path: Path) -> None:
    _, _, branch, _ = imported_store(tmp_path)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await app.open(branch)
            view = app.window.transcript
            await until(lambda: view.fork_header() is not None
                        and view.fork_header().shared.isVisibleTo(view.fork_header()),
                        what="shared prefix shown")
            u = await app.client.usage(branch)
            shared = u["shared"]
            tokens = sum(shared[k] for k in TOKENS)
            text = view.fork_header().shared.text()
            assert text.startswith("shared prefix $"), text
            shown = float(text.split("$")[1].split(" ")[0].replace(",", ""))
            assert shown == pytest.approx(shared["cost"], abs=1e-4)
            assert f"{tokens:,} tokens" in text
            # the prefix is the main line's first turns: its replies, priced once
            assert 0 < shared["cost"] < u["total"]["cost"]

    aloop(scenario())


def money_in(text: str) -> float:
    return float(text.split("$")[1].split(" ", maxsplit=1)[0].replace(",", ""))


def test_compare_shows_the_shared_prefix_once_and_each_branchs_own_cost(
    aloop: Any, tmp_path: Path
) -> None:
    path, main, branch, _ = imported_store(tmp_path)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            branches = app.window.features["branches"]
            branches.select_pair(main, branch)
            branches.compare.trigger()
            await until(lambda: branches.compare_view is not None
                        and branches.compare_view.isVisible(), what="compare view")
            view = branches.compare_view
            left, right = view.left_usage.text(), view.right_usage.text()
            shared = view.shared.text().splitlines()[-1]
            assert left.startswith("Own: $"), left
            assert right.startswith("Own: $"), right
            assert shared.startswith("Shared, counted once: $"), shared

            def tokens(line: str) -> int:
                words = line.split(" · ")[1:]
                return sum(int(w.split(" ")[0].replace(",", "")) for w in words)

            # the three parts hold each reply of the file once
            raw = raw_counts(path)
            assert tokens(left) + tokens(right) + tokens(shared) == sum(raw.values())
            # the branch's own part is what sessions usage says it is
            b = await app.client.usage(branch)
            assert money_in(right) == pytest.approx(b["own"]["cost"], abs=1e-4)
            assert tokens(right) == sum(b["own"][k] for k in TOKENS)
            assert money_in(left) + money_in(right) + money_in(shared) == pytest.approx(
                library_cost(raw), abs=2e-4)
            if SHOTS:
                view.grab().save(str(Path(SHOTS) / "compare-costs.png"))

    aloop(scenario())


def test_a_fork_of_a_session_whose_vendor_is_not_configured_says_which_model_answers(
    aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    _, main, _, _ = imported_store(tmp_path)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            await app.open(main)
            note = app.window.findChild(QLabel, "answeringModel")
            assert not note.isVisibleTo(app.window)  # an imported session of its own
            before = set(app.controller.tree.session_ids())
            app.window.action_fork.trigger()
            child = await until(lambda: next(iter(set(app.controller.tree.session_ids())
                                                  - before), None), what="the fork")
            await until(lambda: app.controller.current == child, what="the fork opened")
            await app.idle()
            row = app.controller.tree.summary(child)
            assert row is not None
            assert row["model"] != MODEL  # no key for Claude here: the default answers
            assert note.isVisibleTo(app.window)
            assert note.text().startswith(f"Answers with {row['model']}"), note.text()
            assert MODEL in note.text()

    aloop(scenario())


def test_each_turn_of_the_transcript_says_its_tokens_and_cost(aloop: Any, tmp_path: Path) -> None:
    _, main, _, _ = imported_store(tmp_path)

    async def scenario() -> None:
        from forkwise.core.reading.entries import TURN_END
        from forkwise.gui.transcript.transcript_html import entry_html

        async with open_app(tmp_path, demo=False) as app:
            await app.open(main)
            ends = [e for e in app.entries if e.kind == TURN_END and e.data.get("usage")]
            assert len(ends) >= 2, [e.kind for e in app.entries]
            palette = app.window.transcript.palette()
            for end in ends:
                spent = end.data["usage"]
                shown = entry_html(end, palette)
                assert f"{spent['output']:,} out" in shown, shown
                assert "$" in shown, shown
            # the turns' costs add up to the session's, as `sessions usage` prices it
            total = (await app.client.usage(main))["total"]
            assert sum(e.data["usage"]["cost"] for e in ends) == pytest.approx(
                total["cost"], abs=1e-6)
            assert sum(e.data["usage"]["output"] for e in ends) == total["output"]
            if SHOTS:
                app.window.transcript.scrollToBottom()
                await app.idle()
                app.window.grab().save(str(Path(SHOTS) / "turn-costs.png"))

    aloop(scenario())

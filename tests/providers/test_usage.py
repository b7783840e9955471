"""Usage and cost (`forkwise sessions usage`, `sessions list --json`): imported totals equal
an independent count over the agents' own files; a fork's own and shared parts add up to
its lineage's; cost is the tokens times the price `genai-prices` gives for the model and
day, computed with no network."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from fake_endpoint import Server
from genai_prices import calc_price
from genai_prices.types import Usage
from vendor_streams import claude_stream

from forkwise.core.cli import main as cli

sys.path.insert(0, str(Path(__file__).parents[1] / "formats"))
import codex_fixtures
import pi_fixtures
from claude_fixtures import MODEL, SID, Transcript, rewound

TOKENS = ("input", "output", "cacheRead", "cacheWrite", "reasoning")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def run_json(*argv: str) -> Any:
    code, out, err = run(*argv, "--json")
    assert code == 0, err
    return orjson.loads(out)


def claude_file(root: Path) -> Path:
    t = Transcript(SID)
    t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    rewound(t)  # a rewind: the main line and a branch share the first turns
    return t.write(root / f"{SID}.jsonl")


def claude_counts(path: Path) -> dict[str, dict[str, int]]:
    """Per message.id, the usage of the last line that carries it (each reply is written
    one line per content block, every line repeating the message's usage)."""
    out: dict[str, dict[str, int]] = {}
    for line in path.read_bytes().splitlines():
        entry = orjson.loads(line)
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) and "usage" in message:
            u = message["usage"]
            out[message["id"]] = {
                "input": u["input_tokens"],
                "output": u["output_tokens"],
                "cacheRead": u.get("cache_read_input_tokens", 0),
                "cacheWrite": u.get("cache_creation_input_tokens", 0),
                "reasoning": 0,
            }
    return out


def tokens_of(part: dict[str, Any]) -> dict[str, int]:
    return {k: part[k] for k in TOKENS}


def summed(parts: list[dict[str, Any]]) -> dict[str, int]:
    return {k: sum(p[k] for p in parts) for k in TOKENS}


def library_cost(model: str, day: str, t: dict[str, int]) -> float:
    usage = Usage(
        input_tokens=t["input"] + t["cacheRead"] + t["cacheWrite"],
        cache_read_tokens=t["cacheRead"],
        cache_write_tokens=t["cacheWrite"],
        output_tokens=t["output"],
    )
    when = datetime.fromisoformat(day).replace(tzinfo=UTC)
    return float(calc_price(usage, model, genai_request_timestamp=when).total_price)


def test_claude_code_usage_is_counted_once_per_reply_and_priced_by_the_library(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "store")
    path = claude_file(tmp_path / "claude")
    report = run_json("sessions", "import", "--from", "claude", str(path), "--store", store)
    main = f"claude-{SID}"
    (branch,) = [sid for sid in report["imported"] if sid != main]
    rows = {r["id"]: r for r in run_json("sessions", "list", "--store", store)}
    m, b = (run_json("sessions", "usage", sid, "--store", store) for sid in (main, branch))
    for u in (m, b):
        assert tokens_of(u["total"]) == summed([u["own"], u["shared"]])
    assert rows[main]["usage"]["own"] == m["own"]
    assert rows[branch]["usage"]["own"] == b["own"]
    assert b["shared"]["input"] > 0  # the branch's copied prefix is its shared part
    # the lineage counts the shared prefix once: the file's replies, each once
    raw = claude_counts(path)
    lineage = summed([m["total"], b["own"]])
    assert lineage == summed(list(raw.values()))
    # cost: the tokens times the library's price for the model on the day they were used
    day = "2026-01-05"  # the fixture's clock
    assert m["byModel"].keys() == {MODEL}
    expected = library_cost(MODEL, day, tokens_of(m["total"]))
    assert m["total"]["cost"] == pytest.approx(expected, abs=1e-6)
    assert m["total"]["cost"] > 0


def test_codex_usage_is_the_token_count_totals_differences(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    rollout = codex_fixtures.basic()
    path = rollout.write(home)
    store = str(tmp_path / "store")
    run_json("sessions", "import", "--from", "codex", str(path), "--store", store)
    sid = f"codex-{codex_fixtures.thread_id(1)}"
    u = run_json("sessions", "usage", sid, "--store", store)
    last = None
    for line in path.read_bytes().splitlines():
        payload = orjson.loads(line).get("payload") or {}
        if payload.get("type") == "token_count" and payload.get("info"):
            last = payload["info"]["total_token_usage"]
    assert last is not None
    assert u["total"]["input"] + u["total"]["cacheRead"] == last["input_tokens"]
    assert u["total"]["cacheRead"] == last["cached_input_tokens"]
    assert u["total"]["output"] == last["output_tokens"]
    assert u["total"]["reasoning"] == last["reasoning_output_tokens"]
    assert list(u["byModel"]) == ["gpt-5-codex"]


def test_pi_usage_and_its_cost(tmp_path: Path) -> None:
    s = pi_fixtures.PiSession(pi_fixtures.SID)
    s.user("one")
    s.assistant("first")
    s.user("two")
    s.assistant("second")
    path = s.write(tmp_path / "pi")
    store = str(tmp_path / "store")
    run_json("sessions", "import", "--from", "pi", str(path), "--store", store)
    u = run_json("sessions", "usage", f"pi-{pi_fixtures.SID}", "--store", store)
    counted = [orjson.loads(line).get("message", {}).get("usage") for line in path.read_bytes().splitlines()]
    counted = [c for c in counted if c]
    assert len(counted) == 2
    assert u["total"]["input"] == sum(c["input"] for c in counted)
    assert u["total"]["output"] == sum(c["output"] for c in counted)
    assert u["total"]["cost"] == pytest.approx(sum(c["cost"]["total"] for c in counted), abs=1e-9)


def test_a_model_without_a_price_shows_its_tokens_and_no_cost(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.exchange("hello", "hi", model="claude-made-up-9")
    path = t.write(tmp_path / "claude" / f"{SID}.jsonl")
    store = str(tmp_path / "store")
    run_json("sessions", "import", "--from", "claude", str(path), "--store", store)
    u = run_json("sessions", "usage", f"claude-{SID}", "--store", store)
    assert u["total"]["input"] == 10
    assert u["total"]["cost"] is None
    code, out, _ = run("sessions", "usage", f"claude-{SID}", "--store", store)
    assert code == 0
    assert "no price" in out


def test_prices_are_read_with_no_network() -> None:
    """A process whose every socket connect fails still prices tokens (the table ships
    with the package)."""
    script = textwrap.dedent(
        """
        import socket
        def refuse(*args, **kwargs):
            raise AssertionError("network used")
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        from forkwise.core.log.costs import part
        from forkwise.core.log.usage import Tally
        t = Tally(input=1000, output=100)
        print(part({("claude-sonnet-4-5", "2026-01-05"): t})["cost"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == pytest.approx(1000 * 3e-6 + 100 * 15e-6)


@pytest.mark.asyncio
async def test_a_forks_own_and_shared_usage_add_up_to_its_lineage(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{server.port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-usage-test")
    store = str(tmp_path / "store")
    t = Transcript(SID)
    t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    path = t.write(tmp_path / "claude" / f"{SID}.jsonl")
    await asyncio.to_thread(run_json, "sessions", "import", "--from", "claude", str(path), "--store", store)
    source = f"claude-{SID}"
    child = (await asyncio.to_thread(run_json, "sessions", "fork", source, "--store", store))["child"]
    server.stream(claude_stream(text="More.", model=MODEL), done=False)
    code, _, err = await asyncio.to_thread(run, "sessions", "prompt", child, "more?", "--store", store)
    assert code == 0, err
    src = await asyncio.to_thread(run_json, "sessions", "usage", source, "--store", store)
    mine = await asyncio.to_thread(run_json, "sessions", "usage", child, "--store", store)
    # what the child shares is its source's whole usage; its own is the one step's
    assert tokens_of(mine["shared"]) == tokens_of(src["total"])
    assert tokens_of(mine["own"]) == {
        "input": 12, "output": 34, "cacheRead": 500, "cacheWrite": 60, "reasoning": 0,
    }
    assert tokens_of(mine["total"]) == summed([mine["shared"], mine["own"]])
    rows = {r["id"]: r for r in await asyncio.to_thread(run_json, "sessions", "list", "--store", store)}
    assert rows[child]["usage"]["own"] == mine["own"]
    # the lineage: the source whole, the child's own part once more
    lineage = summed([rows[source]["usage"]["own"], rows[child]["usage"]["own"]])
    assert lineage == tokens_of(mine["total"])
    assert mine["own"]["cost"] == pytest.approx(
        library_cost(MODEL, datetime.now(UTC).date().isoformat(), tokens_of(mine["own"])), abs=1e-6
    )


def test_a_branch_left_in_the_middle_of_a_turn_counts_the_replies_it_repeats_once(
    tmp_path: Path,
) -> None:
    """A rewind to a point inside a turn (after a tool result): the branch's log repeats
    that turn's first reply after its seed (the last turn end both share); it is the
    source's reply, so the lineage counts it once, as the raw file has it once."""
    t = Transcript(SID)
    t.exchange("first question", "first answer")
    turn = t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    end = t.last
    t.last = turn["result"]  # back to the tool result, inside the turn: a branch
    t.exchange("no, list the tests", "There is one test.")
    t.last = end  # the main line goes on from the turn's end
    t.exchange("thanks", "You are welcome.")
    path = t.write(tmp_path / "claude" / f"{SID}.jsonl")
    store = str(tmp_path / "store")
    report = run_json("sessions", "import", "--from", "claude", str(path), "--store", store)
    assert len(report["imported"]) == 2
    rows = run_json("sessions", "list", "--store", store)
    lineage = summed([r["usage"]["own"] for r in rows])
    assert lineage == summed(list(claude_counts(path).values()))
    for row in rows:
        u = run_json("sessions", "usage", row["id"], "--store", store)
        assert u["own"] == row["usage"]["own"]
        assert tokens_of(u["total"]) == summed([u["own"], u["shared"]])


def test_gemini_cli_usage_is_each_replys_last_tokens(tmp_path: Path) -> None:
    """Gemini CLI rewrites a reply's line as its tokens come in: each reply counts once,
    with the tokens of its last line; the cached part of the prompt is read from the
    cache, the thoughts are output and reasoning."""
    import gemini_fixtures

    path = gemini_fixtures.settled(gemini_fixtures.coding_session().write(tmp_path / ".gemini"))
    store = str(tmp_path / "store")
    run_json("sessions", "import", "--from", "gemini", str(path), "--store", store)
    last: dict[str, dict[str, int]] = {}
    for line in path.read_bytes().splitlines()[1:]:
        record = orjson.loads(line)
        if record.get("type") == "gemini" and isinstance(record.get("tokens"), dict):
            last[record["id"]] = record["tokens"]
    assert len(last) >= 2
    u = run_json("sessions", "usage", f"gemini-{gemini_fixtures.SID}", "--store", store)
    want = {
        "input": sum(t["input"] - t["cached"] for t in last.values()),
        "output": sum(t["output"] + t["thoughts"] for t in last.values()),
        "cacheRead": sum(t["cached"] for t in last.values()),
        "cacheWrite": 0,
        "reasoning": sum(t["thoughts"] for t in last.values()),
    }
    assert tokens_of(u["total"]) == want
    assert want["output"] > 0
    (model,) = u["byModel"]
    assert model == gemini_fixtures.MODEL


def test_opencode_usage_is_each_replys_tokens_priced(tmp_path: Path) -> None:
    """OpenCode records each reply's tokens (reasoning apart from the output, the cache
    apart from the input): they count once a reply, priced by the library; the session
    keeps OpenCode's own id (`opencode-ses_…`)."""
    import sqlite3

    import opencode_fixtures

    db_path = tmp_path / "data" / "opencode" / "opencode.db"
    db = opencode_fixtures.OpenCodeDb(db_path)
    sid = db.session("Fix the parser")
    db.exchange(sid, "Why does the parser fail?", "A missing bracket.")
    db.exchange(sid, "Fix it", "Fixed.")
    db.close()
    opencode_fixtures.settled(db_path)
    store = str(tmp_path / "store")
    report = run_json("sessions", "import", "--from", "opencode", str(db_path), "--store", store)
    assert report["imported"] == [f"opencode-{sid}"], report
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as raw:
        replies = [orjson.loads(data) for (data,) in raw.execute("select data from message")]
    replies = [r for r in replies if r.get("role") == "assistant" and "tokens" in r]
    assert len(replies) == 2
    u = run_json("sessions", "usage", f"opencode-{sid}", "--store", store)
    assert u["total"]["input"] == sum(r["tokens"]["input"] for r in replies)
    assert u["total"]["output"] == sum(
        r["tokens"]["output"] + r["tokens"]["reasoning"] for r in replies)
    # a model the price table knows is priced by it (OpenCode's own figure stands for one
    # it does not)
    (model,) = {r["modelID"] for r in replies}
    assert u["byModel"].keys() == {model}
    day = datetime.fromtimestamp(replies[0]["time"]["created"] / 1000, UTC).date().isoformat()
    expected = library_cost(model, day, tokens_of(u["total"]))
    assert u["total"]["cost"] == pytest.approx(expected, abs=1e-9)
    assert u["total"]["cost"] > 0

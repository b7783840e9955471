"""Continue in <agent> read back by the import: the file Forkwise exported, imported from
the agent's folder, is stored beneath the session it continues (relation "continued",
nothing copied), not as a session of its own; a re-import after the person kept chatting
in the agent appends to that same session. Through the CLI, on real files."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
import claude_fixtures as cf
from codex_fixtures import OLD, Rollout, home_with_fork, thread_id

from forkwise.core.cli import main as cli


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


def rows(store: str) -> dict[str, Any]:
    code, listed = run_json("sessions", "list", "--store", store)
    assert code == 0
    return {r["id"]: r for r in listed}


def fork_prompt_export(store: str, source: str, tool: str) -> tuple[str, Any]:
    """Fork `source` here, one turn with the offline model, export it to `tool`."""
    code, forked = run_json("sessions", "fork", source, "--child", "mine", "--store", store)
    assert code == 0, forked
    code, turn = run_json("sessions", "prompt", "mine", "and one more", "--store", store)
    assert (code, turn["status"]) == (0, "completed"), turn
    code, sent = run_json("sessions", "export", "mine", "--to", tool, "--store", store)
    assert code == 0, sent
    return "mine", sent


def assert_beneath(store: str, sid: str, parent: str) -> dict[str, Any]:
    row = rows(store)[sid]
    assert (row["parentSession"], row["relation"], row["seedLength"]) == (parent, "continued", 0)
    code, shown = run_json("sessions", "show", sid, "--store", store)
    assert code == 0
    first = shown["events"][0]
    assert (first["type"], first["source"], first["boundary"]) == ("history/fork", parent, 0)
    return row


def imported_claude(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, str, cf.Transcript]:
    """A Claude Code home with a rewound session, imported through the CLI into a store:
    (the home, the store, the session as written)."""
    root, store = tmp_path / "claude", str(tmp_path / "store")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    chat = cf.Transcript(cf.SID)
    cf.rewound(chat)
    cf.write_old(chat, root)
    code, report = run_json("sessions", "import", "--from", "claude", str(root), "--store", store)
    assert code == 0, report
    return root, store, chat


def test_a_claude_session_continued_in_claude_code_comes_back_beneath_its_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, store, chat = imported_claude(tmp_path, monkeypatch)
    k, sent = fork_prompt_export(store, f"claude-{cf.SID}", "claude")
    code, back = run_json("sessions", "import", "--from", "claude", str(root), "--store", store)
    assert code == 0, back
    new = f"claude-{sent['id']}"
    assert back["imported"] == [new]
    row = assert_beneath(store, new, k)
    assert row["messages"] == rows(store)[k]["messages"]  # the whole conversation, its own
    # what is stored is the tool's file, mapped: "and one more" is in it
    code, shown = run_json("sessions", "show", new, "--store", store)
    said = [p.get("text") for e in shown["events"] if e["type"] == "message" for p in e["parts"]]
    assert "and one more" in said

    # the person keeps chatting in Claude Code: the same session grows, still beneath K
    path = Path(sent["path"])
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    more = cf.Transcript(sent["id"], start=chat.clock)
    more.last = next(e["uuid"] for e in reversed(entries) if e.get("uuid"))
    more.exchange("asked in claude", "answered in claude")
    with path.open("ab") as fh:
        fh.write(more.encode())
    os.utime(path, (1_700_000_100, 1_700_000_100))
    code, grown = run_json("sessions", "import", "--from", "claude", str(root), "--store", store)
    assert code == 0, grown
    assert (grown["imported"], grown["updated"]) == ([], [new])
    assert_beneath(store, new, k)
    assert rows(store)[new]["messages"] == row["messages"] + 2
    code, again = run_json("sessions", "import", "--from", "claude", str(root), "--store", store)
    assert (again["imported"], again["updated"]) == ([], [])


def test_a_codex_fork_continued_in_codex_comes_back_beneath_the_fork_not_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The written rollout's session_meta carries `forked_from_id` of the Codex source; the
    export record wins: the fork K is beneath that source already, the file beneath K."""
    home, store = tmp_path / "codex", str(tmp_path / "store")
    monkeypatch.setenv("CODEX_HOME", str(home))
    home_with_fork(home)
    code, report = run_json("sessions", "import", "--from", "codex", str(home), "--store", store)
    assert code == 0, report
    source = f"codex-{thread_id(1)}"
    k, sent = fork_prompt_export(store, source, "codex")
    first = orjson.loads(Path(sent["path"]).read_bytes().splitlines()[0])
    assert first["payload"]["forked_from_id"] == thread_id(1)
    code, back = run_json("sessions", "import", "--from", "codex", str(home), "--store", store)
    assert code == 0, back
    new = f"codex-{sent['id']}"
    assert back["imported"] == [new]
    assert_beneath(store, new, k)
    assert rows(store)[k]["parentSession"] == source
    # a store that exported nothing keeps the reader's lineage: beneath the Codex source
    other = str(tmp_path / "other")
    code, elsewhere = run_json("sessions", "import", "--from", "codex", str(home), "--store", other)
    assert code == 0, elsewhere
    there = rows(other)[new]
    assert (there["parentSession"], there["relation"]) == (source, "fork")

    # more turns in Codex: appended to the same session
    path = Path(sent["path"])
    more = Rollout(sent["id"])
    more.prompt("asked in codex").answer("answered in codex", item_id="msg_more_codex")
    with path.open("ab") as fh:
        fh.write(more.raw())
    os.utime(path, (OLD + 100, OLD + 100))
    code, grown = run_json("sessions", "import", "--from", "codex", str(home), "--store", store)
    assert code == 0, grown
    assert (grown["imported"], grown["updated"]) == ([], [new])
    assert_beneath(store, new, k)


def test_a_pi_fork_continued_in_pi_comes_back_beneath_the_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi's written header names the source file as `parentSession`: beneath K all the same."""
    import pi_fixtures as pf

    pi, store = tmp_path / "pi", str(tmp_path / "store")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(pi))
    branchy, _ = pf.branchy()
    pf.settled(branchy.write(pi / "sessions" / "--home-ada-project--"))
    code, report = run_json("sessions", "import", "--from", "pi", str(pi), "--store", store)
    assert code == 0, report
    source = next(sid for sid, r in rows(store).items() if not r["parentSession"])
    k, sent = fork_prompt_export(store, source, "pi")
    code, back = run_json("sessions", "import", "--from", "pi", str(pi), "--store", store)
    assert code == 0, back
    assert back["imported"] == [f"pi-{sent['id']}"]
    assert_beneath(store, f"pi-{sent['id']}", k)

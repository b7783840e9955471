"""Forkwise against pi itself: files pi writes, pi's upgrade of old files, and pi opening
the files Forkwise exports. Runs `@mariozechner/pi-coding-agent` (pinned, see pi_node.py)
with node; fails when node or npm cannot run it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from pi_export import export_input, forked_with_new_turns, last_turn_end
from pi_fixtures import PiSession, settled
from pi_node import ensure_pi, forkwise_messages, pi_messages, run
from pi_store import store_and_replay, without_src

from forkwise.core.formats.base import ImportedSession, source_session_id
from forkwise.core.formats.pi import WRITER, PiReader


@pytest.fixture(scope="module")
def pi() -> Path:
    return ensure_pi()


@pytest.fixture(scope="module")
def scenario(pi: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Sessions pi's own SessionManager wrote: a tree with two abandoned branches, a
    branch summary, a compaction; pi's /fork of one branch; a fork into another cwd."""
    base = tmp_path_factory.mktemp("pi")
    out = run(
        pi,
        "scenario",
        base / "sessions" / "--home-ada-proj--",
        "/home/ada/proj",
        base / "sessions" / "--home-ada-other--",
        "/home/ada/other",
        agent_dir=base / "agent",
    )
    for key in ("main", "branched", "forked"):
        settled(Path(out[key]))
    reader = PiReader()
    out["read"] = {key: reader.read(Path(out[key])) for key in ("main", "branched", "forked")}
    return out


def leaf_of(session: ImportedSession) -> str:
    """The pi entry id of the last entry a session's events come from."""
    last = max(n for e in session.events if "src" in e for n in e["src"]["lines"])
    raw = Path(session.source.path).read_bytes().split(b"\n")[last - 1]
    return str(orjson.loads(raw)["id"])


def test_files_pi_writes_read_as_pi_builds_their_context(
    pi: Path, scenario: dict[str, Any]
) -> None:
    for key in ("main", "branched", "forked"):
        sessions: list[ImportedSession] = scenario["read"][key]
        described = run(pi, "open", scenario[key])
        assert described["leafId"] == leaf_of(sessions[0])
        assert forkwise_messages(sessions[0].events) == pi_messages(described["context"])
        # every other leaf is a fork of this file; pi's context at that leaf is its content
        ours = {leaf_of(s) for s in sessions}
        if key == "forked":  # pi's --fork copied the main file's abandoned branches too
            copied = {leaf_of(s) for s in scenario["read"]["main"][1:]}
            assert set(described["leaves"]) == ours | copied
            assert not ours & copied
        else:
            assert set(described["leaves"]) == ours
        for branch in sessions[1:]:
            assert forkwise_messages(branch.events) == pi_messages(
                described["branches"][leaf_of(branch)]
            )
        assert sessions[0].title == described["name"]


def test_lineage_of_pi_branches_and_forks(scenario: dict[str, Any]) -> None:
    ids = scenario["ids"]
    main = scenario["read"]["main"]
    main_sid = main[0].source.id
    assert main[0].id == f"pi-{main_sid}"
    assert len(main) == 3
    assert all((s.parent, s.relation) == (main[0].id, "fork") for s in main[1:])
    q3_branch = source_session_id("pi", main_sid, ids["q3"])
    assert q3_branch in {s.id for s in main}
    # pi's /fork of the q3 branch: its parent is that branch, not the main line
    [branched] = scenario["read"]["branched"][:1]
    assert (branched.parent, branched.relation) == (q3_branch, "fork")
    parent = next(s for s in main if s.id == q3_branch)
    assert without_src(branched.events[: len(parent.events)]) == without_src(parent.events)
    # `pi --fork` copies the whole tree into another cwd: its main line forks the main line
    forked = scenario["read"]["forked"]
    assert len(forked) == 1  # the branches it copied are the main file's, imported there
    assert forked[0].parent == main[0].id
    assert forked[0].cwd == "/home/ada/other"
    boundary = last_turn_end(main[0].events)
    assert without_src(forked[0].events[:boundary]) == without_src(main[0].events[:boundary])


def test_what_pi_writes_is_valid_in_forkwise(scenario: dict[str, Any], tmp_path: Path) -> None:
    n = 0
    for key in ("main", "branched", "forked"):
        for session in scenario["read"][key]:
            n += 1
            replayed, _ = store_and_replay(tmp_path / f"store{n}", session)
            texts = [(m.role, m.text) for m in replayed.messages]
            assert texts == [
                (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
                for e in session.events
                if e["type"] == "message"
            ]
            assert replayed.open_turn is None


def old_session(version: int) -> PiSession:
    s = PiSession(
        f"{version}{version}{version}00000-0000-4000-8000-000000000000",
        version=version,
        header_extra={"provider": "anthropic", "modelId": "claude-opus-4-5"}
        if version == 1
        else None,
    )
    s.user("one")
    s.assistant(thinking="hmm", calls=(("t1", "read", {"path": "a"}),))
    s.tool_result("t1", "read", "A")
    s.assistant("first")
    s.thinking_level("high")
    s.bash("ls", "a\n")
    s.custom_role_message("hook", "injected")
    s.user("two")
    s.assistant("second")
    if version == 1:
        s.compaction("one, two", 8)  # the entry at index 8 (header = 0): "two"
    else:
        s.compaction("one, two", s.entries[7]["id"])
    s.user("three")
    s.assistant("third", stop="aborted")
    return s


@pytest.mark.parametrize("version", [1, 2])
def test_old_files_read_as_pi_upgrades_them(pi: Path, tmp_path: Path, version: int) -> None:
    path = settled(old_session(version).write(tmp_path))
    before = path.read_bytes()
    [ours] = PiReader().read(path)
    upgraded = run(pi, "migrate", path)
    assert upgraded["header"]["version"] == 3
    assert forkwise_messages(ours.events) == pi_messages(upgraded["context"])
    assert pi_messages(upgraded["context"])[0] == ("summary", "one, two")
    # the same entry (the prompt "two") is the first kept one on both sides
    [summary] = [e for e in ours.events if e["type"] == "context/summary"]
    [compaction] = [e for e in upgraded["entries"] if e["type"] == "compaction"]
    theirs = [e["id"] for e in upgraded["entries"]].index(compaction["firstKeptEntryId"])
    kept_turn = next(
        e for e in ours.events if e.get("turn") == f"turn:{summary['firstKeptEntryId']}"
    )
    assert kept_turn["src"]["lines"] == [theirs + 2]
    assert path.read_bytes() == before  # read, never upgraded on disk


def test_pi_opens_exported_sessions_as_forkwise_has_them(
    pi: Path, scenario: dict[str, Any], tmp_path: Path
) -> None:
    main = scenario["read"]["main"]
    root = tmp_path / "agent" / "sessions"
    # the whole main line, unchanged
    whole = WRITER.export(export_input(main[0]), root, None)
    opened = run(pi, "open", whole.path)
    original = run(pi, "open", scenario["main"])
    assert opened["header"]["parentSession"] == scenario["main"]
    assert opened["header"]["id"] == whole.id
    assert pi_messages(opened["context"]) == pi_messages(original["context"])
    assert opened["leafId"] == original["leafId"]
    # a branch: pi continues from the branch's leaf
    branch = next(
        s for s in main[1:] if any(e["type"] == "tool/result" and e.get("error") for e in s.events)
    )
    exported = WRITER.export(export_input(branch), root, None)
    opened = run(pi, "open", exported.path)
    assert opened["leafId"] == leaf_of(branch)
    assert pi_messages(opened["context"]) == pi_messages(original["branches"][leaf_of(branch)])
    # a Forkwise fork with a turn added: pi sees the seed, then the new turn, its model
    boundary = last_turn_end(main[0].events, before=len(main[0].events) - 1)
    events = forked_with_new_turns(main[0], boundary)
    fork = WRITER.export(export_input(main[0], events), root, None)
    before = fork.path.read_bytes()
    opened = run(pi, "open", fork.path)
    assert fork.path.read_bytes() == before  # pi had nothing to upgrade or repair
    assert pi_messages(opened["context"]) == forkwise_messages(
        [{k: v for k, v in e.items() if k != "seq"} for e in events]
    )
    assert opened["context"]["model"] == {"provider": "openai", "modelId": "qwen3-coder"}
    assert opened["context"]["thinkingLevel"] == "high"
    assert opened["name"] == "Shorter summary"
    assert opened["leafId"] == orjson.loads(fork.path.read_bytes().split(b"\n")[-2])["id"]


def test_pi_opens_an_export_of_a_v1_session(pi: Path, tmp_path: Path) -> None:
    path = settled(old_session(1).write(tmp_path / "pi"))
    [session] = PiReader().read(path)
    events = forked_with_new_turns(session, last_turn_end(session.events))
    done = WRITER.export(export_input(session, events), tmp_path / "out", None)
    opened = run(pi, "open", done.path)  # pi upgrades it (and rewrites it: pi's way)
    assert pi_messages(opened["context"]) == forkwise_messages(
        [{k: v for k, v in e.items() if k != "seq"} for e in events]
    )
    assert opened["header"]["parentSession"] == str(path)


def test_pi_continues_an_export_and_the_growth_reads_as_an_append(
    pi: Path, scenario: dict[str, Any], tmp_path: Path
) -> None:
    main = scenario["read"]["main"][0]
    events = forked_with_new_turns(main, last_turn_end(main.events, before=len(main.events) - 1))
    done = WRITER.export(export_input(main, events), tmp_path, None)
    [before] = PiReader().read(settled(done.path))
    grown = run(pi, "continue", done.path, "One more thing")
    # pi continues from the entry Forkwise wrote last
    assert grown["before"] == grown["parentOfPrompt"] == leaf_of(before)
    [after] = PiReader().read(settled(done.path))
    assert after.events[: len(before.events)] == before.events
    assert [m[0] for m in forkwise_messages(after.events)][-2:] == ["user", "assistant"]
    assert forkwise_messages(after.events)[-2][1] == "One more thing"

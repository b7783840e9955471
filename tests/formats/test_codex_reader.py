"""The Codex reader on generated rollouts: content, turns, lineage, titles, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import zstandard
from codex_fixtures import (
    BARE_TS,
    ROLLED_BACK,
    Rollout,
    basic,
    fork_of,
    name_thread,
    rolled_back_twice,
    thread_id,
    write_bare,
)

from forkwise.core.formats.base import FormatError, ImportedSession
from forkwise.core.formats.codex import READER, CodexReader, NoSessionMeta
from forkwise.core.log.events import Event
from forkwise.core.log.replay import replay
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session import SessionHeader
from forkwise.core.store.session_store import SessionStore


def read_one(path: Path) -> ImportedSession:
    sessions = CodexReader().read(path)
    assert len(sessions) == 1
    return sessions[0]


def of_type(session: ImportedSession, kind: str) -> list[dict[str, Any]]:
    return [e for e in session.events if e["type"] == kind]


def prompts(session: ImportedSession) -> list[str]:
    return [m["parts"][0]["text"] for m in of_type(session, "message") if m["role"] == "user"]


def without_src(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "src"} for e in events]


def store_and_replay(tmp_path: Path, sessions: list[ImportedSession]) -> dict[str, Any]:
    """Feed the records through the real store (brackets, fields, unique ids) and replay."""
    store = SessionStore(JsonlBackend(tmp_path / "store"))
    out = {}
    try:
        for s in sessions:
            events = [Event.from_record(dict(e, seq=i)) for i, e in enumerate(s.events, 1)]
            header = SessionHeader(
                id=s.id, created=s.created, cwd=s.cwd, meta={"source": s.source.to_meta()}
            )
            store.import_session(header, events)
            out[s.id] = replay(events)
    finally:
        store.close()
    return out


def test_basic_session_maps_prompts_answers_tools_and_context(tmp_path: Path) -> None:
    path = basic().write(tmp_path)
    s = read_one(path)
    assert s.id == f"codex-{thread_id(1)}"
    assert s.cwd == "/work/proj"
    assert s.source.tool == "codex"
    assert s.source.id == thread_id(1)
    assert s.parent is None
    assert s.relation is None
    messages = of_type(s, "message")
    users = [m["parts"][0]["text"] for m in messages if m["role"] == "user"]
    # developer text, AGENTS.md and environment context are context, not prompts
    assert users == ["list the files", "fix the bug"]
    assert len(of_type(s, "plugin/codex/context")) == 3
    texts = [p["text"] for m in messages for p in m["parts"] if p["type"] == "text"]
    # each answer once, although its agent_message twin is in the file too
    assert texts.count("There are two files.") == 1
    # the UI twins of response items make no events of their own
    twins = {"user_message", "agent_message", "agent_reasoning"}
    assert not twins & set(s.unmapped)
    assert {e["type"] for e in s.events} == {
        "turn/start",
        "turn/end",
        "message",
        "tool/result",
        "model/select",
        "plugin/codex/context",
        "plugin/codex/encrypted_reasoning",
        "plugin/codex/web_search_call",
        "plugin/codex/token_count",
        "plugin/codex/exec_command_end",
        "plugin/codex/patch_apply_end",
        "usage",
    }
    # each token_count's raw record stays; a `usage` event counts what it adds to the total
    counts = [e["payload"]["info"]["total_token_usage"] for e in of_type(s, "plugin/codex/token_count")]
    usage = of_type(s, "usage")
    assert sum(u["input"] + u["cacheRead"] for u in usage) == counts[-1]["input_tokens"]
    assert sum(u["output"] for u in usage) == counts[-1]["output_tokens"]
    assert {u["model"] for u in usage} == {"gpt-5-codex"}
    reasoning = [p["text"] for m in messages for p in m["parts"] if p["type"] == "reasoning"]
    assert reasoning == ["**Planning** list the files", "**Fixing**"]
    assert [e["encrypted_content"] for e in of_type(s, "plugin/codex/encrypted_reasoning")] == [
        "gAAAA0001",
        "gAAAA0002",
    ]
    calls = {p["id"]: p for m in messages for p in m["parts"] if p["type"] == "tool_call"}
    assert calls["call_ls"]["name"] == "shell"
    assert calls["call_ls"]["args"] == {"command": ["bash", "-lc", "ls"], "timeout_ms": 1000}
    assert calls["call_patch"]["name"] == "apply_patch"
    assert calls["call_patch"]["args"].startswith("*** Begin Patch")
    assert calls["call_test"] == {
        "type": "tool_call",
        "id": "call_test",
        "name": "local_shell",
        "args": {"type": "exec", "command": ["pytest", "-q"], "timeout_ms": 60000},
    }
    results = {r["call"]: r for r in of_type(s, "tool/result")}
    assert results["call_ls"]["tool"] == "shell"
    assert "error" not in results["call_ls"]
    assert results["call_patch"]["tool"] == "apply_patch"
    assert "error" not in results["call_patch"]
    assert results["call_test"]["tool"] == "local_shell"
    assert results["call_test"]["error"] is True
    assert s.unmapped["web_search_call"] == 1
    assert s.unmapped["token_count"] == 2
    assert s.unmapped["exec_command_end"] == 1
    assert s.unmapped["patch_apply_end"] == 1
    assert [e["status"] for e in of_type(s, "turn/end")] == ["completed", "completed"]
    assert s.title == "list the files"


def test_every_event_cites_its_lines_and_every_line_is_cited(tmp_path: Path) -> None:
    r = basic()
    s = read_one(r.write(tmp_path))
    cited = sorted({n for e in s.events if "src" in e for n in e["src"]["lines"]})
    # all lines but the session_meta (the header the writer makes anew)
    assert cited == list(range(2, len(r.lines) + 1))
    assert all(e["src"]["id"] == thread_id(1) for e in s.events if "src" in e)
    assert all(isinstance(e["ts"], str) and e["ts"].endswith("Z") for e in s.events)


def test_records_are_valid_for_the_store_and_replay_gives_the_messages(tmp_path: Path) -> None:
    s = read_one(basic().write(tmp_path / "codex"))
    result = store_and_replay(tmp_path, [s])[s.id]
    assert [(m.role, m.text) for m in result.messages if m.text] == [
        ("user", "list the files"),
        ("assistant", "There are two files."),
        ("user", "fix the bug"),
        ("assistant", "Patched a.py; one test still fails."),
    ]
    assert result.open_turn is None


def test_model_select_only_when_model_or_effort_changes(tmp_path: Path) -> None:
    r = Rollout(thread_id(2)).meta()
    r.turn("one", "1", first=True)
    r.turn("two", "2")  # same model and effort: no event
    r.turn("three", "3", effort="high")
    r.turn("four", "4", model="gpt-5", effort="high")
    s = read_one(r.write(tmp_path))
    selects = [(e["provider"], e["model"], e.get("reasoning")) for e in of_type(s, "model/select")]
    assert selects == [
        ("openai", "gpt-5-codex", "medium"),
        ("openai", "gpt-5-codex", "high"),
        ("openai", "gpt-5", "high"),
    ]
    kinds = [e["type"] for e in s.events if e["type"] in ("model/select", "turn/start")]
    assert kinds[:2] == ["model/select", "turn/start"]


def test_aborted_and_unfinished_turns(tmp_path: Path) -> None:
    r = Rollout(thread_id(3)).meta()
    r.turn("stop me", "partial", end="interrupted", first=True)
    r.turn("replaced", "partial", end="replaced")
    r.turn("never finished", "partial", end=None)
    path = r.write(tmp_path)
    s = read_one(path)
    ends = of_type(s, "turn/end")
    assert [e["status"] for e in ends] == ["cancelled", "interrupted", "interrupted"]
    assert "src" not in ends[-1]  # invented: the file never closed that turn
    assert ends[-1]["ts"] == s.events[-2]["ts"]
    # the same file while Codex is still writing it: the last turn stays open
    os.utime(path, None)
    live = read_one(path)
    assert [e["status"] for e in of_type(live, "turn/end")] == ["cancelled", "interrupted"]
    assert live.events[-1]["type"] != "turn/end"


def test_a_half_written_last_line_is_left_for_later(tmp_path: Path) -> None:
    r = Rollout(thread_id(4)).meta()
    r.turn("hello", "hi", first=True)
    data = r.raw() + b'{"timestamp":"2025-09-01T10:09:00.000Z","type":"event_msg","pay'
    s = read_one(r.write(tmp_path, data=data))
    assert [m["parts"][0]["text"] for m in of_type(s, "message") if m["role"] == "user"] == [
        "hello"
    ]


def test_malformed_line_is_kept_with_a_warning_naming_its_line(tmp_path: Path) -> None:
    r = Rollout(thread_id(5)).meta()
    r.turn("hello", "hi", first=True)
    lines = r.raw().split(b"\n")
    lines[3] = b'{"timestamp": "x", "type": "event_msg", broken'
    (s,) = CodexReader().read(r.write(tmp_path, data=b"\n".join(lines)))
    kept = of_type(s, "plugin/codex/unreadable")
    assert [(e["text"], e["src"]["lines"]) for e in kept] == [(lines[3].decode(), [4])]
    assert [(w.line, w.code) for w in s.warnings] == [(4, "unreadable-line")]
    texts = [m["parts"][0]["text"] for m in of_type(s, "message")]
    assert (texts[0], texts[-1]) == ("hello", "hi")
    lines[3] = b'["not", "an", "object"]'
    (s,) = CodexReader().read(r.write(tmp_path, data=b"\n".join(lines)))
    assert [w.line for w in s.warnings] == [4]
    # before the thread's session_meta an unreadable line may be its identity: refused
    lines.insert(0, b"{garbage")
    with pytest.raises(FormatError) as err:
        CodexReader().read(r.write(tmp_path, data=b"\n".join(lines)))
    assert err.value.line == 1


def test_a_file_without_session_meta_has_no_identity(tmp_path: Path) -> None:
    r = Rollout(thread_id(6))
    r.turn("hello", "hi", first=True)
    with pytest.raises(NoSessionMeta) as err:
        CodexReader().read(r.write(tmp_path))
    assert err.value.code == "codex-no-session-meta"
    assert err.value.to_dict()["details"]["line"] == 1


def test_legacy_fork_shares_its_parents_events(tmp_path: Path) -> None:
    parent = Rollout(thread_id(7)).meta()
    parent.turn("first", "one", first=True)
    parent.turn("second", "two")
    child = fork_of(parent, thread_id(8))
    child.turn("in the fork", "forked answer")
    parent.write(tmp_path)
    p = read_one(parent.path_in(tmp_path))
    c = read_one(child.write(tmp_path))
    assert c.id == f"codex-{thread_id(8)}"  # the FIRST session_meta is the identity
    assert (c.parent, c.relation) == (p.id, "fork")
    assert without_src(c.events[: len(p.events)]) == without_src(p.events)
    assert all(e["src"]["id"] == thread_id(8) for e in c.events if "src" in e)
    assert [m["parts"][0]["text"] for m in of_type(c, "message") if m["role"] == "user"] == [
        "first",
        "second",
        "in the fork",
    ]
    store_and_replay(tmp_path, [p, c])


def test_a_fork_read_right_after_its_parent_reads_as_it_does_alone(tmp_path: Path) -> None:
    """One reader decodes a file's lines as it maps them and keeps only its bytes: the fork
    read next decodes its parent again from them, and must read as a fresh reader reads it
    (the parent's times on the shared lines, the parent's events), the parent's file cut
    off in the middle of its last line as Codex leaves it while writing."""
    parent = Rollout(thread_id(41)).meta()
    parent.turn("first", "one", first=True)
    parent.turn("second", "two")
    child = fork_of(parent, thread_id(42))
    child.turn("in the fork", "forked answer")
    torn = parent.raw() + b'{"timestamp":"2025-09-01T11:00:00.000Z","type":"event_msg","pa'
    parent_path = parent.write(tmp_path, data=torn)
    child_path = child.write(tmp_path)
    reader = CodexReader()
    p = reader.read(parent_path)
    c = reader.read(child_path)
    assert c == CodexReader().read(child_path)
    assert p == CodexReader().read(parent_path)
    assert p[0].events[-1]["type"] == "turn/end"
    assert without_src(c[0].events[: len(p[0].events)]) == without_src(p[0].events)
    assert c[0].events[0]["ts"] == p[0].events[0]["ts"] != child.lines[1]["timestamp"]


def test_subagent_thread_spawn(tmp_path: Path) -> None:
    source = {
        "subagent": {
            "thread_spawn": {
                "parent_thread_id": thread_id(9),
                "depth": 1,
                "agent_nickname": "Ada",
                "agent_role": "worker",
            }
        }
    }
    r = Rollout(thread_id(10)).meta(source=source, agent_nickname="Ada")
    r.turn("do the sub task", "done", first=True)
    s = read_one(r.write(tmp_path))
    assert (s.parent, s.relation) == (f"codex-{thread_id(9)}", "subagent")


def test_thread_rolled_back_makes_a_branch_of_the_dropped_turns(tmp_path: Path) -> None:
    r = Rollout(thread_id(11)).meta()
    r.turn("keep", "kept", first=True)
    r.turn("drop one", "dropped 1")
    r.turn("drop two", "dropped 2")
    r.event("thread_rolled_back", num_turns=2)
    marker = len(r.lines)
    r.turn("after", "new answer")
    main, branch = CodexReader().read(r.write(tmp_path))
    assert prompts(main) == ["keep", "after"]
    assert of_type(main, "plugin/codex/thread_rolled_back")[0]["payload"]["num_turns"] == 2
    assert branch.id == f"codex-{thread_id(11)}-rb{marker}"
    assert (branch.parent, branch.relation) == (main.id, "fork")
    assert prompts(branch) == ["keep", "drop one", "drop two"]
    assert branch.unmapped["token_count"] == 3
    kept = of_type(main, "turn/end")[0]
    shared = main.events.index(kept) + 1
    assert without_src(branch.events[:shared]) == without_src(main.events[:shared])
    store_and_replay(tmp_path, [main, branch])


def test_two_rollbacks_of_a_thread_are_branches_titled_as_the_thread(tmp_path: Path) -> None:
    """Each rolled-back tail keeps the thread's title, as another tool's rewind or branch
    does (the app numbers such forks "<title> — fork N"), and is created when it left the
    thread: the branches order as they were left, whatever their ids' order."""
    r = rolled_back_twice()
    home = tmp_path / "codex"
    path = r.write(home)
    first, dropped, again, last = ROLLED_BACK
    main, *branches = CodexReader().read(path)
    assert prompts(main) == [first, last]
    assert main.title == first
    rollbacks = [n for n, line in enumerate(r.lines, 1)
                 if line["payload"].get("type") == "thread_rolled_back"]
    assert rollbacks[0] < 100 <= rollbacks[1]  # as ids: "-rb1.." sorts before "-rb..."
    by_line = {b.id: b for b in branches}
    one, two = (by_line[f"{main.id}-rb{n}"] for n in rollbacks)
    assert [prompts(one), prompts(two)] == [[first, *dropped], [first, *again]]
    assert {one.title, two.title} == {main.title}
    assert {one.parent, two.parent} == {main.id}
    # created: when each left the thread (its first turn past the shared one)
    starts = {b.id: next(e["ts"] for e in of_type(b, "turn/start")[1:]) for b in branches}
    assert (one.created, two.created) == (starts[one.id], starts[two.id])
    assert main.created < one.created < two.created
    store_and_replay(tmp_path, [main, one, two])
    # a named thread: its branches carry the name
    name_thread(home, r.tid, "Nightly job")
    named = CodexReader().read(path)
    assert {s.title for s in named} == {"Nightly job"}


def test_compaction_is_a_context_summary(tmp_path: Path) -> None:
    r = Rollout(thread_id(12)).meta()
    r.turn("long work", "did it", first=True)
    r.add(
        "compacted",
        {
            "message": "Summary: the user wanted long work.",
            "replacement_history": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "long work"}],
                }
            ],
        },
    )
    r.event("context_compacted")
    r.turn("go on", "went on")
    s = read_one(r.write(tmp_path))
    (summary,) = of_type(s, "context/summary")
    assert summary["text"] == "Summary: the user wanted long work."
    assert summary["replacement_history"][0]["role"] == "user"
    assert s.unmapped["context_compacted"] == 1


def test_title_from_session_index_last_entry_wins(tmp_path: Path) -> None:
    r = Rollout(thread_id(13)).meta()
    r.turn("the first prompt\nwith two lines", "ok", first=True)
    path = r.write(tmp_path)
    reader = CodexReader()  # one reader, as the host keeps: it sees the index change
    assert reader.read(path)[0].title == "the first prompt with two lines"
    name_thread(tmp_path, thread_id(13), "Old name")
    name_thread(tmp_path, thread_id(14), "Another thread")
    assert reader.read(path)[0].title == "Old name"
    name_thread(tmp_path, thread_id(13), "Renamed")
    assert reader.read(path)[0].title == "Renamed"


def test_zstd_rollouts_read_like_plain_ones(tmp_path: Path) -> None:
    r = basic(15)
    plain = read_one(r.write(tmp_path / "a"))
    packed = r.path_in(tmp_path / "b").with_suffix(".jsonl.zst")
    packed.parent.mkdir(parents=True)
    packed.write_bytes(zstandard.ZstdCompressor().compress(r.raw()))
    os.utime(packed, (1_600_000_000, 1_600_000_000))
    assert READER.sniff(packed.read_bytes()[:4096])
    assert list(CodexReader().session_files(tmp_path / "b")) == [packed]
    assert read_one(packed).events == plain.events


def test_files_roots_and_sniffing(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    a = basic(16).write(home)
    b = basic(17).write(home, archived=True)
    (home / "sessions" / "notes.txt").write_text("x")
    roots = READER.default_roots({"CODEX_HOME": str(home)}, tmp_path)
    assert roots == [home / "sessions", home / "archived_sessions"]
    assert READER.default_roots({}, tmp_path) == [
        tmp_path / ".codex" / "sessions",
        tmp_path / ".codex" / "archived_sessions",
    ]
    assert [list(READER.session_files(r)) for r in roots] == [[a], [b]]
    assert list(READER.session_files(a)) == [a]
    assert READER.sniff(a.read_bytes()[:4096])
    claude = {
        "parentUuid": None,
        "type": "user",
        "message": {"role": "user"},
        "timestamp": "2025-09-01T10:00:00Z",
        "sessionId": "x",
    }
    pi = {"type": "session", "version": 3, "id": "x", "timestamp": "2025-09-01T10:00:00Z"}
    assert not READER.sniff(json.dumps(claude).encode())
    assert not READER.sniff(json.dumps(pi).encode())


def test_rollouts_from_before_the_envelope(tmp_path: Path) -> None:
    """Mid-2025 Codex wrote the meta bare on line 1 and bare response items after it."""
    tid = thread_id(30)
    ts = BARE_TS
    path = write_bare(tmp_path, tid)
    assert READER.sniff(path.read_bytes()[:4096])
    s = read_one(path)
    assert s.id == f"codex-{tid}"
    assert s.created == ts
    assert s.cwd == "/w"  # the meta had none: the environment context names it
    assert prompts(s) == ["what is here?", "thanks"]
    assert [e["status"] for e in of_type(s, "turn/end")] == ["completed", "completed"]
    assert of_type(s, "tool/result")[0]["tool"] == "shell"
    assert s.unmapped["state"] == 2
    assert {e["ts"] for e in s.events} == {ts}
    store_and_replay(tmp_path, [s])


def test_what_has_no_forkwise_equivalent_is_kept_as_plugin_events(tmp_path: Path) -> None:
    r = Rollout(thread_id(33)).meta()
    r.turn("hello", "hi", first=True)
    r.add("inter_agent_communication", {"from": "a", "to": "b", "text": "ping"})
    r.add("some_future_line", [1, 2, 3])
    r.event("stream_error", message="reconnecting")
    r.item("image_generation_call", id="ig_1", status="completed", result="iVBORw0")
    r.item(
        "message",
        role="user",
        content=[
            {"type": "input_text", "text": "look at this"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
        ],
    )
    s = read_one(r.write(tmp_path))
    plugins = {e["type"]: e for e in s.events if e["type"].startswith("plugin/codex/")}
    assert plugins["plugin/codex/inter_agent_communication"]["payload"]["text"] == "ping"
    assert plugins["plugin/codex/some_future_line"]["payload"] == [1, 2, 3]
    assert plugins["plugin/codex/stream_error"]["payload"]["message"] == "reconnecting"
    assert plugins["plugin/codex/image_generation_call"]["payload"]["result"] == "iVBORw0"
    image = plugins["plugin/codex/image"]
    assert image["item"]["image_url"].startswith("data:image/png")
    assert all("src" in e for e in plugins.values())
    assert s.unmapped["image"] == 1
    assert prompts(s) == ["hello", "look at this"]
    store_and_replay(tmp_path, [s])


def test_a_spawned_thread_with_its_parents_history_is_a_subagent(tmp_path: Path) -> None:
    parent = Rollout(thread_id(34)).meta()
    parent.turn("plan the work", "planned", first=True)
    child = fork_of(parent, thread_id(35))
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": thread_id(34), "depth": 1}}}
    child.lines[0]["payload"]["source"] = spawn
    child.turn("do part one", "done")
    p = read_one(parent.write(tmp_path))
    c = read_one(child.write(tmp_path))
    assert (c.parent, c.relation) == (p.id, "subagent")
    assert without_src(c.events[: len(p.events)]) == without_src(p.events)


def test_a_tool_output_that_quotes_an_exit_code_is_judged_by_codex_own_summary() -> None:
    """Codex's JSON summary of a shell call keeps its metadata last: an `"exit_code":`
    inside the command's output is escaped in that JSON and never taken for it."""
    from forkwise.core.formats.codex.mapping import _failed_output

    quoted = 'log: {"exit_code": 1}\n' * 3
    for code, failed in ((0, False), (2, True), (-1, True)):
        summary = json.dumps({"output": quoted, "metadata": {"exit_code": code}})
        assert _failed_output(summary) is failed
        assert _failed_output({"content": summary}) is failed
    assert _failed_output(json.dumps({"output": quoted})) is False  # no summary: no failure
    assert _failed_output({"success": False, "content": "done"}) is True


def test_a_kept_file_is_read_again_once_it_changed(tmp_path: Path) -> None:
    """The reader keeps what it parsed (for the forks read after a file) by the size and
    mtime the file had when it was read: a file that grew is parsed again, one that did
    not is not."""
    reader = CodexReader()
    r = Rollout(thread_id(8)).meta()
    r.turn("first question", "first answer", first=True)
    path = r.write(tmp_path)
    assert prompts(reader.read(path)[0]) == ["first question"]
    kept = reader._load(path)
    assert reader._load(path) is kept  # unchanged: the parse is used again
    r.turn("second question", "second answer")
    assert r.write(tmp_path) == path
    assert reader._load(path) is not kept
    assert prompts(reader.read(path)[0]) == ["first question", "second question"]
    reader.release()


def test_every_record_is_made_in_a_log_lines_key_order(tmp_path: Path) -> None:
    """The records are `seq_first` (the import numbers them where they are, without a
    copy): every one starts with `seq`, `type` and `ts`, whichever kind of event it is."""
    r = basic(40)
    r.turn("stop me", "partial", end="interrupted")
    r.add("compacted", {"message": "Summary.", "replacement_history": []})
    r.add("some_future_line", {"x": 1})
    r.event("stream_error", message="reconnecting")
    r.item(
        "message",
        role="user",
        content=[
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
        ],
    )
    r.turn("drop me", "dropped")
    r.event("thread_rolled_back", num_turns=1)
    r.turn("never finished", "partial", end=None)
    sessions = CodexReader().read(r.write(tmp_path))
    assert len(sessions) == 2  # the main line and the rolled back branch
    kinds = set()
    for s in sessions:
        assert s.seq_first
        for record in s.events:
            assert list(record)[:3] == ["seq", "type", "ts"], record
            kinds.add(record["type"])
    assert {
        "message", "turn/start", "turn/end", "tool/result", "model/select", "context/summary",
        "plugin/codex/encrypted_reasoning", "plugin/codex/image", "plugin/codex/stream_error",
        "plugin/codex/some_future_line", "plugin/codex/token_count",
    } <= kinds
    store_and_replay(tmp_path, sessions)

"""Reading Claude Code transcripts: turns, merged replies, tool results, titles, compaction,
rewinds, fork files, subagents, plugin events and bad lines — on generated files, through
the real store and replay."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from claude_checks import convo, stored, types, without_src
from claude_fixtures import (
    OTHER,
    OTHER_MODEL,
    SID,
    Transcript,
    det_uuid,
    project_file,
    rewound,
    write_old,
)

from forkwise.core.formats.base import FormatError, source_session_id
from forkwise.core.formats.claude import READER
from forkwise.core.formats.claude.layout import munge_cwd
from forkwise.core.formats.claude.tree import load


def main_of(path: Path):
    sessions = READER.read(path)
    return sessions[0], sessions


def test_tool_turn_merges_reply_and_pairs_result(tmp_path: Path) -> None:
    t = Transcript(SID)
    tt = t.tool_turn("list the files", "ls", "a.py\nb.py", "There are two files.")
    t.exchange("thanks", "You're welcome.")
    main, sessions = main_of(write_old(t, tmp_path))
    assert len(sessions) == 1
    assert main.id == f"claude-{SID}"
    assert main.parent is None
    assert main.cwd == "/home/dev/proj.x"
    assert main.source.version == "2.0.77"
    msgs = [e for e in main.events if e["type"] == "message"]
    reply = msgs[1]
    # three entries (thinking, text, tool_use) sharing message.id are one message
    assert reply["src"]["lines"] == [3, 4, 5]
    assert [p["type"] for p in reply["parts"]] == ["reasoning", "text", "tool_call"]
    assert reply["parts"][2] == {
        "type": "tool_call",
        "id": tt["call"],
        "name": "Bash",
        "args": {"command": "ls", "description": "run it"},
    }
    result = next(e for e in main.events if e["type"] == "tool/result")
    assert (result["call"], result["tool"], result["output"]) == (tt["call"], "Bash", "a.py\nb.py")
    assert result["turn"] == reply["turn"] == msgs[0]["turn"]
    # the tool-result entry started no turn: two prompts, two turns
    assert types(main).count("turn/start") == 2
    ends = [e["status"] for e in main.events if e["type"] == "turn/end"]
    assert ends == ["completed", "completed"]
    selects = [e for e in main.events if e["type"] == "model/select"]
    assert [(s["provider"], s["model"]) for s in selects] == [
        ("anthropic", "claude-sonnet-4-5-20250929")
    ]
    # usage is mapped (one `usage` event per reply), not left as a plugin event
    assert main.unmapped == {"file-history-snapshot": 2}
    usage = [e for e in main.events if e["type"] == "usage"]
    assert len({u["message"] for u in usage}) == len(usage) == 3  # once per reply
    first = usage[0]  # the three-line reply's: its last line's usage, counted once
    assert (first["input"], first["output"], first["cacheRead"]) == (12, 15, 1200)
    assert first["raw"]["service_tier"] == "standard"  # the record kept as it was
    assert all("ts" in e for e in main.events)
    replays = stored(sessions, tmp_path / "store")
    view = replays[main.id]
    assert [(m.role, m.text) for m in view.messages] == [
        ("user", "list the files"),
        ("assistant", "I will run ls."),
        ("assistant", "There are two files."),
        ("user", "thanks"),
        ("assistant", "You're welcome."),
    ]
    assert view.messages[1].reasoning == "Think about ls"
    assert view.title == "list the files"


def test_parallel_tool_results_are_not_branches(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.user("read both")
    a = t.assistant(
        [
            {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"file_path": "/a"}},
            {"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {"file_path": "/b"}},
        ],
        stop="tool_use",
    )
    # each result hangs from the entry of its own call: the first is a leaf
    t.tool_result("toolu_a", "A", a[0])
    t.tool_result("toolu_b", "B", a[1])
    t.assistant([{"type": "text", "text": "Both read."}])
    main, sessions = main_of(write_old(t, tmp_path))
    assert len(sessions) == 1
    results = [(e["call"], e["output"]) for e in main.events if e["type"] == "tool/result"]
    assert results == [("toolu_a", "A"), ("toolu_b", "B")]
    stored(sessions, tmp_path / "store")


def test_rewind_gives_main_line_and_fork(tmp_path: Path) -> None:
    t = Transcript(SID)
    ids = rewound(t)
    main, sessions = main_of(write_old(t, tmp_path))
    assert len(sessions) == 2
    branch = sessions[1]
    assert [c[1] for c in convo(main)] == [
        "first question",
        "first answer",
        "second question, rephrased",
        "another answer",
    ]
    assert [c[1] for c in convo(branch)] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
        "third question",
        "third answer",
    ]
    assert branch.id == source_session_id("claude", SID, ids["old"])
    assert (branch.parent, branch.relation) == (main.id, "fork")
    # the shared prefix reads as equal events, through the first turn's end
    first_end = types(main).index("turn/end") + 1
    assert without_src(main.events[:first_end]) == without_src(branch.events[:first_end])
    assert main.events[first_end] != branch.events[first_end]
    stored(sessions, tmp_path / "store")


def test_branch_of_a_branch_names_the_branch_it_left(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.exchange("q1", "a1")
    root = t.last
    old2, _ = t.exchange("q2 old", "a2 old")
    mid = t.last
    old3, _ = t.exchange("q3 old", "a3 old")
    t.last = mid
    t.exchange("q3 other", "a3 other")
    t.last = root
    t.exchange("q2 new", "a2 new")
    main, sessions = main_of(write_old(t, tmp_path))
    by_id = {s.id: s for s in sessions}
    b2 = by_id[source_session_id("claude", SID, old2)]
    b3 = by_id[source_session_id("claude", SID, old3)]
    assert b2.parent == main.id
    assert b3.parent in (main.id, b2.id)
    assert b3.parent != b3.id
    lasts = {s.id: convo(s)[-1][1] for s in sessions}
    assert sorted(lasts.values()) == ["a2 new", "a3 old", "a3 other"]
    assert lasts[main.id] == "a2 new"
    stored(sessions, tmp_path / "store")


def test_compaction_is_one_context_event_and_main_line_crosses_it(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.exchange("before compaction", "old answer")
    _boundary, _summary = t.compact("Summary: we talked.")
    t.exchange("after compaction", "new answer")
    main, sessions = main_of(write_old(t, tmp_path))
    assert len(sessions) == 1
    assert [c[1] for c in convo(main)] == [
        "before compaction",
        "old answer",
        "after compaction",
        "new answer",
    ]
    ctx = [e for e in main.events if e["type"].startswith("context/")]
    assert len(ctx) == 1
    assert ctx[0]["type"] == "context/summary"
    assert ctx[0]["text"].endswith("Summary: we talked.")
    assert ctx[0]["trigger"] == "manual"
    assert ctx[0]["preTokens"] == 51234
    assert ctx[0]["src"]["lines"] == [4, 5]  # the boundary and the summary entry
    # the summary entry started no turn
    assert types(main).count("turn/start") == 2
    stored(sessions, tmp_path / "store")


def test_titles_rank_custom_over_summary_over_ai_over_prompt(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.exchange("what is the plan", "a plan")
    assert READER.read(write_old(t, tmp_path))[0].title == "what is the plan"
    t.ai_title("Planning chat")
    assert READER.read(write_old(t, tmp_path))[0].title == "Planning chat"
    t.custom_title("My plan")
    leaf = t.last
    assert leaf is not None
    t.summary("Discussing the plan", leaf)
    t.ai_title("Later AI title")
    main = READER.read(write_old(t, tmp_path))[0]
    assert main.title == "My plan"
    titles = [e["title"] for e in main.events if e["type"] == "session/title"]
    assert titles == ["what is the plan", "Planning chat", "My plan"]
    assert main.unmapped.get("summary") == 1
    assert main.unmapped.get("ai-title") == 1
    assert stored([main], tmp_path / "store")[main.id].title == "My plan"


def test_interrupts_meta_and_unfinished_turns(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.user("start a long job")
    t.meta("<local-command-caveat>Caveat: generated by local commands</local-command-caveat>")
    t.assistant([{"type": "text", "text": "Working"}], stop=None)
    t.interrupt()
    t.exchange("never mind", "OK.")
    t.user("and one more")
    calls = t.assistant(
        [{"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "sleep"}}],
        stop="tool_use",
    )
    assert calls
    path = write_old(t, tmp_path)
    main, _ = main_of(path)
    assert types(main).count("turn/start") == 3
    ends = [e["status"] for e in main.events if e["type"] == "turn/end"]
    assert ends == ["cancelled", "completed", "interrupted"]
    assert "src" not in [e for e in main.events if e["type"] == "turn/end"][-1]
    assert main.unmapped["meta"] == 1
    assert main.unmapped["interrupt"] == 1
    # the same file still being written leaves its last turn open
    os.utime(path)
    live, _ = main_of(path)
    assert [e["status"] for e in live.events if e["type"] == "turn/end"] == [
        "cancelled",
        "completed",
    ]
    stored([main], tmp_path / "store")


def test_bad_line_is_kept_with_a_warning_and_torn_tail_is_a_file_being_written(
    tmp_path: Path,
) -> None:
    t = Transcript(SID)
    t.exchange("hello", "hi")
    path = write_old(t, tmp_path)
    good = path.read_bytes()
    path.write_bytes(good + b'{"type":"user", broken\n')
    main, _ = main_of(path)
    kept = [e for e in main.events if e["type"] == "plugin/claude/unreadable"]
    assert [(e["text"], e["src"]["lines"]) for e in kept] == [('{"type":"user", broken', [4])]
    assert [(w.line, w.code, w.path) for w in main.warnings] == [(4, "unreadable-line", str(path))]
    path.write_bytes(good + b"[1,2]\n")
    main, _ = main_of(path)
    assert [w.line for w in main.warnings] == [4]
    path.write_bytes(good + b'{"parentUuid":"x","type":"user","mess')
    main, _ = main_of(path)
    assert [c[1] for c in convo(main)] == ["hello", "hi"]


def test_blank_and_whitespace_lines_keep_the_line_numbers_of_the_file(tmp_path: Path) -> None:
    t = Transcript(SID)
    t.exchange("hello", "hi")
    path = write_old(t, tmp_path)
    good = path.read_bytes().splitlines()
    # empty lines, a whitespace-only line, CRLF endings and no newline at the end
    odd = b"\n" + good[0] + b"\r\n\n  \t \n" + b"\n".join(good[1:])
    path.write_bytes(odd)
    loaded = load(path)
    assert loaded.lines == [2, *range(5, 5 + len(good) - 1)]
    assert not loaded.torn
    assert [orjson.dumps(e) for e in loaded.entries] == [
        orjson.dumps(orjson.loads(raw)) for raw in good
    ]
    main, _ = main_of(path)
    assert [c[1] for c in convo(main)] == ["hello", "hi"]
    # a bad line after them is named by its number in the file
    path.write_bytes(odd + b"\n\n{oops}\n")
    main, _ = main_of(path)
    assert [w.line for w in main.warnings] == [5 + len(good) - 1 + 1]


def test_file_without_session_id_fails(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(
        b'{"parentUuid":null,"uuid":"u1","type":"user","message":{"role":"user","content":"hi"}}\n'
    )
    with pytest.raises(FormatError) as err:
        READER.read(path)
    assert err.value.line == 1


def test_plugin_events_for_images_system_and_unknown_lines(tmp_path: Path) -> None:
    t = Transcript(SID)
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"},
    }
    t.user([{"type": "text", "text": "what is in this picture"}, image])
    t.system("api_error", "overloaded, retrying")
    t.raw(
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "timestamp": "2026-01-05T09:00:09Z",
            "sessionId": SID,
            "content": "next",
        }
    )
    t.assistant([{"type": "text", "text": "A cat."}], model=OTHER_MODEL)
    t.raw({"type": "x-future-kind", "uuid": "zz", "payload": 1})
    main, _ = main_of(write_old(t, tmp_path))
    kinds = {e["type"] for e in main.events if e["type"].startswith("plugin/")}
    assert kinds == {
        "plugin/claude/image",
        "plugin/claude/system",
        "plugin/claude/x-future-kind",
    }
    img = next(e for e in main.events if e["type"] == "plugin/claude/image")
    assert img["block"] == image
    future = next(e for e in main.events if e["type"] == "plugin/claude/x-future-kind")
    assert future["entry"] == {"type": "x-future-kind", "uuid": "zz", "payload": 1}
    # the prompt queue is the tool's bookkeeping: its line joins the entry before it
    system = next(e for e in main.events if e["type"] == "plugin/claude/system")
    assert system["src"]["lines"] == [2, 3]
    assert main.unmapped["queue-operation"] == 1
    assert convo(main)[0][1] == "what is in this picture"
    assert [e["model"] for e in main.events if e["type"] == "model/select"] == [OTHER_MODEL]
    stored([main], tmp_path / "store")


def test_fork_session_files_are_forks_sharing_the_parent_events(tmp_path: Path) -> None:
    parent = Transcript(OTHER)
    parent.exchange("shared one", "answer one")
    parent.tool_turn("shared two", "pwd", "/home", "You are home.")
    parent_path = write_old(parent, tmp_path)
    for style in ("2.0", "2.1"):
        child = Transcript(SID, start=parent.clock)
        # the copy: the parent's entries with their uuids and timestamps
        for entry in parent.entries:
            copy = dict(entry)
            if style == "2.1" and "uuid" in copy:
                copy["sessionId"] = SID
                copy["forkedFrom"] = {"sessionId": OTHER, "messageUuid": copy["uuid"]}
            if "uuid" in copy:
                child.entries.append(copy)
                child.last = copy["uuid"]
        child.exchange("only in the child", "child answer")
        main, sessions = main_of(write_old(child, tmp_path / style))
        assert len(sessions) == 1
        assert (main.parent, main.relation) == (f"claude-{OTHER}", "fork")
        source = READER.read(parent_path)[0]
        # every turn of the parent reads the same in the copy (the snapshots it lacks fold
        # into src, which the comparison ignores)
        end = max(i for i, e in enumerate(source.events) if e["type"] == "turn/end") + 1
        assert types(source).count("turn/end") == 2
        assert without_src(main.events[:end]) == without_src(source.events[:end]), style
        assert convo(main)[-1][1] == "child answer"


def test_inline_sidechain_is_a_subagent_of_the_task_caller(tmp_path: Path) -> None:
    t = Transcript(SID, version="1.0.30")
    t.user("explore the repo")
    task = t.assistant(
        [
            {
                "type": "tool_use",
                "id": "toolu_task",
                "name": "Task",
                "input": {"description": "explore", "prompt": "List the modules"},
            }
        ],
        stop="tool_use",
    )
    side = Transcript(SID, version="1.0.30", sidechain=True, start=t.clock)
    side._n = 100
    side.user("List the modules", parent=None)
    side.assistant([{"type": "text", "text": "core and gui"}])
    t.entries.extend(side.entries)
    t.clock = side.clock
    t.tool_result("toolu_task", [{"type": "text", "text": "core and gui"}], task[-1])
    t.assistant([{"type": "text", "text": "The repo has core and gui."}])
    main, sessions = main_of(write_old(t, tmp_path))
    assert len(sessions) == 2
    sub = sessions[1]
    assert (sub.parent, sub.relation) == (main.id, "subagent")
    assert [c[1] for c in convo(sub)] == ["List the modules", "core and gui"]
    assert [c[1] for c in convo(main)] == ["explore the repo", "", "The repo has core and gui."]
    assert convo(main)[1][2] == [("Task", {"description": "explore", "prompt": "List the modules"})]
    result = next(e for e in main.events if e["type"] == "tool/result")
    assert result["tool"] == "Task"
    assert result["output"] == "core and gui"
    stored(sessions, tmp_path / "store")


@pytest.mark.parametrize("layout", ["beside", "nested"])
def test_subagent_file_is_a_subagent_of_its_session(tmp_path: Path, layout: str) -> None:
    agent = Transcript(SID, sidechain=True, agent_id="a1b2c3d4")
    agent.user("Find the bug", parent=None)
    agent.tool_turn("look closer", "grep bug", "x.py:3", "Line 3 of x.py.")
    folder = project_file(tmp_path, agent).parent
    path = folder / (
        "agent-a1b2c3d4.jsonl" if layout == "beside" else f"{SID}/subagents/agent-a1b2c3d4.jsonl"
    )
    agent.write(path)
    os.utime(path, (1_700_000_000, 1_700_000_000))
    sessions = READER.read(path)
    assert len(sessions) == 1
    sub = sessions[0]
    assert sub.id == source_session_id("claude", SID, "a1b2c3d4")
    assert (sub.parent, sub.relation) == (f"claude-{SID}", "subagent")
    assert sub.source.id == f"{SID}/agent-a1b2c3d4"
    assert convo(sub)[0][1] == "Find the bug"
    assert path in list(READER.session_files(tmp_path / "projects"))
    stored(sessions, tmp_path / "store")


def test_layout_roots_files_and_sniff(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert READER.default_roots({}, home) == [home / ".claude" / "projects"]
    assert READER.default_roots({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}, home) == [
        tmp_path / "cfg" / "projects"
    ]
    assert munge_cwd("/home/dev/proj.x") == "-home-dev-proj-x"
    assert munge_cwd("C:\\Users\\me") == "C--Users-me"
    long = "/" + "a" * 250
    assert munge_cwd(long).startswith("-" + "a" * 199 + "-")
    assert len(munge_cwd(long)) < 215
    t = Transcript(SID)
    t.snapshot(det_uuid("x"))
    t.exchange("hi", "hello")
    path = write_old(t, tmp_path)
    assert list(READER.session_files(tmp_path)) == [path]
    assert list(READER.session_files(path)) == [path]
    assert READER.sniff(path.read_bytes()[:300])
    # Claude Code 2.1 may open a file with its own state entries
    head = b'{"type":"mode","mode":"default","sessionId":"s"}\n{"type":"atis-latch","atis":1}\n'
    assert READER.sniff(head)
    assert not READER.sniff(b'{"type":"session","version":3,"id":"x","cwd":"/"}\n')
    assert not READER.sniff(
        orjson.dumps({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}) + b"\n"
    )


def test_entries_written_again_on_resume_are_replays_not_branches(tmp_path: Path) -> None:
    """Claude Code 2.0.77, resuming a file whose reply is one multi-block entry, writes that
    reply again as one entry per block (new uuids, same timestamps and message.id) and
    chains the rest after them; the old entries are left as a dead branch."""
    t = Transcript(SID)
    prompt = t.user("count the lines")
    multi = t.assistant(
        [{"type": "text", "text": "Counting."}], stop="tool_use"
    )  # then made two-block below
    entry = t.entries[-1]
    use = {"type": "tool_use", "id": "toolu_c", "name": "Bash", "input": {"command": "wc"}}
    entry["message"]["content"].append(use)
    old_result = t.tool_result("toolu_c", "42", multi[0])
    (old_final,) = t.assistant([{"type": "text", "text": "42 lines."}])
    copies = []
    t.last = prompt
    for block in entry["message"]["content"]:
        copy = orjson.loads(orjson.dumps(entry))
        copy["message"]["content"] = [block]
        copy["uuid"] = det_uuid(f"split-{block['type']}")
        copy["parentUuid"] = t.last
        t.entries.append(copy)
        t.last = copy["uuid"]
        copies.append(copy)
    for old in (old_result, old_final):
        original = next(e for e in t.entries if e.get("uuid") == old)
        copy = dict(original, uuid=det_uuid(f"again-{old}"), parentUuid=t.last)
        t.entries.append(copy)
        t.last = copy["uuid"]
    t.exchange("what did we count?", "Lines.")
    main, sessions = main_of(write_old(t, tmp_path))
    assert len(sessions) == 1
    assert convo(main) == [
        ("user", "count the lines", []),
        ("assistant", "Counting.", [("Bash", {"command": "wc"})]),
        ("assistant", "42 lines.", []),
        ("user", "what did we count?", []),
        ("assistant", "Lines.", []),
    ]
    (replayed,) = [e for e in main.events if e["type"] == "plugin/claude/replayed"]
    assert replayed["src"]["lines"] == [2, 3, 4]
    stored(sessions, tmp_path / "store")


@pytest.mark.parametrize("layout", ["beside", "nested"])
def test_subagent_parent_is_the_branch_that_called_it(tmp_path: Path, layout: str) -> None:
    t = Transcript(SID)
    t.exchange("start", "started")
    fork_at = t.last
    old_prompt = t.user("delegate the search")
    task = t.assistant(
        [{"type": "tool_use", "id": "toolu_t", "name": "Task", "input": {"prompt": "Search"}}],
        stop="tool_use",
    )
    t.tool_result(
        "toolu_t", [{"type": "text", "text": "found"}], task[-1], result={"agentId": "f00d"}
    )
    t.assistant([{"type": "text", "text": "It was found."}])
    t.last = fork_at
    t.exchange("do it yourself", "done")
    parent_path = write_old(t, tmp_path)
    agent = Transcript(SID, sidechain=True, agent_id="f00d")
    agent.user("Search", parent=None)
    agent.assistant([{"type": "text", "text": "found"}])
    folder = parent_path.parent
    path = folder / (
        "agent-f00d.jsonl" if layout == "beside" else f"{SID}/subagents/agent-f00d.jsonl"
    )
    agent.write(path)
    os.utime(path, (1_700_000_000, 1_700_000_000))
    (sub,) = READER.read(path)
    assert sub.parent == source_session_id("claude", SID, old_prompt)
    assert sub.relation == "subagent"
    # without the parent file, the session's main line
    parent_path.unlink()
    fresh = type(READER)()
    assert fresh.read(path)[0].parent == f"claude-{SID}"


def test_prompts_without_a_uuid_get_message_ids_of_their_own(tmp_path: Path) -> None:
    """A damaged file repeating a prompt whose uuid is null: each gets its own message
    id (from its line), so the session stores (before, both were `user:…:<None>`)."""
    prompt = {
        "parentUuid": None, "uuid": None, "sessionId": SID, "type": "user", "cwd": "/w",
        "timestamp": "2026-01-05T09:00:01.000Z", "message": {"role": "user", "content": "start"},
    }  # fmt: skip
    tail = {**prompt, "uuid": "u-1", "parentUuid": "gone", "message": {"role": "user", "content": "a"}}
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in (prompt, prompt, tail)))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    sessions = READER.read(path)
    replays = stored(sessions, tmp_path / "store")
    assert [m.text for m in replays[sessions[0].id].messages] == ["start", "start", "a"]

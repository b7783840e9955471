"""Reading pi sessions: content, turns, lineage, old versions, bad lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from pi_fixtures import MODEL, PROVIDER, SID, PiSession, branchy, coding_session, settled
from pi_store import messages, read, store_and_replay, without_src

from forkwise.core.formats.base import FormatError, ImportedSession, source_session_id
from forkwise.core.formats.pi import READER, PiReader
from forkwise.core.formats.pi import entries as pi_entries
from forkwise.core.formats.pi.convert import PathConverter
from forkwise.core.formats.pi.reader import plan


def types(session: ImportedSession) -> list[str]:
    return [e["type"] for e in session.events]


def of_type(session: ImportedSession, etype: str) -> list[dict[str, Any]]:
    return [e for e in session.events if e["type"] == etype]


# -- one linear session ---------------------------------------------------------------------


def test_a_linear_session_maps_every_entry(tmp_path: Path) -> None:
    path = coding_session(SID).write(tmp_path / "sessions" / "--home-ada-project--")
    [session] = read(path)
    assert session.id == f"pi-{SID}"
    assert session.parent is None
    assert session.relation is None
    assert session.cwd == "/home/ada/project"
    assert session.created == "2025-12-08T22:41:05.000Z"
    assert session.title == "Summarise the README"
    assert (
        session.source.tool,
        session.source.path,
        session.source.id,
        session.source.version,
    ) == ("pi", str(path), SID, "3")
    assert messages(session) == [
        ("user", "Read the README and summarise it"),
        ("assistant", ""),
        ("assistant", ""),
        ("assistant", "The README describes a small demo project."),
        ("user", "!ls"),
        ("assistant", ""),
        ("user", "Now list the source folder"),
        ("assistant", ""),
        ("assistant", "There is one file: main.py."),
    ]
    first_call = of_type(session, "message")[1]
    assert first_call["parts"] == [
        {"type": "reasoning", "text": "I should read the file first", "signature": "sig-I should"},
        {"type": "tool_call", "id": "toolu_1", "name": "read", "args": {"path": "README.md"}},
    ]
    # pi's usage and cost stay on the answer as kept fields
    assert first_call["usage"]["cost"]["total"] > 0
    assert first_call["stopReason"] == "toolUse"
    results = of_type(session, "tool/result")
    assert [(r["call"], r["tool"], r["output"], r.get("error", False)) for r in results] == [
        ("toolu_1", "read", "# Demo\nA small project.", False),
        ("toolu_2", "read", "ENOENT: no such file", True),
        (f"bash-{results[2]['call'][5:]}", "bash", "README.md\nsrc\n", False),
        ("call_9", "bash", "main.py\n", False),
    ]
    assert results[0]["details"] == {"lines": 2}
    assert [
        (m["provider"], m["model"], m.get("reasoning")) for m in of_type(session, "model/select")
    ] == [(PROVIDER, MODEL, None), (PROVIDER, MODEL, "medium"), ("openai", "gpt-5", "medium")]
    assert [t["title"] for t in of_type(session, "session/title")] == ["Summarise the README"]
    assert session.unmapped == {"image": 1, "label": 1, "custom": 1}
    [image] = of_type(session, "plugin/pi/image")
    assert image["message"] == of_type(session, "message")[0]["id"]
    assert (image["index"], image["mimeType"], image["data"]) == (1, "image/png", "iVBORw0KGgo=")
    [label] = of_type(session, "plugin/pi/label")
    assert label["label"] == "summary"
    assert label["targetId"]
    [custom] = of_type(session, "plugin/pi/custom")
    assert custom["customType"] == "todo-extension"
    assert custom["data"] == {"items": ["write tests"]}


def test_every_event_names_its_line_and_time(tmp_path: Path) -> None:
    builder = coding_session(SID)
    path = builder.write(tmp_path)
    [session] = read(path)
    lines = path.read_bytes().split(b"\n")
    for event in session.events:
        assert isinstance(event["ts"], str)
        assert event["ts"]
        if event["type"] == "turn/end" and event["status"] == "interrupted":
            continue
        assert event["src"]["id"] == SID
        [number] = event["src"]["lines"]
        entry = orjson.loads(lines[number - 1])
        assert entry["timestamp"] == event["ts"]
    # a message's line holds that message
    for event in of_type(session, "message"):
        entry = orjson.loads(lines[event["src"]["lines"][0] - 1])
        assert event["turn"] in (f"turn:{entry['id']}", event["turn"])
    # every line past the header is named by some event: nothing dropped
    named = {n for e in session.events if "src" in e for n in e["src"]["lines"]}
    assert named == set(range(2, len(builder.entries) + 2))


def test_turns_end_with_the_status_of_their_last_answer(tmp_path: Path) -> None:
    s = PiSession(SID)
    s.user("one")
    s.assistant("done")
    s.user("two")
    s.assistant("partial", stop="aborted")
    s.user("three")
    s.assistant(stop="error", error="overloaded")
    s.user("four")
    s.assistant(calls=(("c1", "bash", {"command": "sleep 99"}),))
    s.tool_result("c1", "bash", "", is_error=True)
    s.user("five")  # the loop above never answered: interrupted
    s.assistant("ok", stop="length")
    [session] = read(s.write(tmp_path))
    assert [e["status"] for e in of_type(session, "turn/end")] == [
        "completed",
        "cancelled",
        "failed",
        "interrupted",
        "completed",
    ]
    ends = of_type(session, "turn/end")
    assert "src" not in ends[3]  # invented: no line says it ended
    assert ends[2]["src"]["lines"] == [7]
    assert of_type(session, "message")[5]["errorMessage"] == "overloaded"


def test_a_last_turn_without_an_answer_stays_open_only_while_the_file_is_written(
    tmp_path: Path,
) -> None:
    s = PiSession(SID)
    s.user("one")
    s.assistant("done")
    s.user("two")
    s.assistant(calls=(("c1", "bash", {"command": "make"}),))
    path = s.write(tmp_path)
    live = PiReader(live_window=300).read(path)[0]  # just written
    assert types(live)[-2:] == ["message", "message"]
    assert types(live).count("turn/start") == types(live).count("turn/end") + 1
    settled(path)
    done = PiReader(live_window=300).read(path)[0]
    assert done.events[-1]["type"] == "turn/end"
    assert done.events[-1]["status"] == "interrupted"
    assert done.events[-1]["ts"] == done.events[-2]["ts"]
    assert without_src(live.events) == without_src(done.events[:-1])


def test_a_torn_last_line_is_left_for_the_next_read(tmp_path: Path) -> None:
    s = PiSession(SID)
    s.user("one")
    s.assistant("done")
    path = s.write(tmp_path)
    whole = READER.read(settled(path))[0]
    with path.open("ab") as f:
        f.write(b'{"type":"message","id":"ab12cd34","parentId":')
    torn = READER.read(path)[0]  # just written: pi is still at it
    assert without_src(torn.events) == without_src(whole.events)


def test_a_bash_command_is_a_turn_with_a_bash_tool_call(tmp_path: Path) -> None:
    s = PiSession(SID)
    s.bash("make test", "1 failed\n", exit_code=2)
    s.bash("sleep 9", "", exit_code=None, cancelled=True)
    s.bash("cat secrets", "x", exclude=True)
    [session] = read(s.write(tmp_path))
    assert types(session) == ["turn/start", "message", "message", "tool/result", "turn/end"] * 3
    prompts = [m for m in of_type(session, "message") if m["role"] == "user"]
    assert [p["parts"][0]["text"] for p in prompts] == ["!make test", "!sleep 9", "!!cat secrets"]
    calls = [m["parts"][0] for m in of_type(session, "message") if m["role"] == "assistant"]
    assert [c["args"] for c in calls] == [
        {"command": "make test"},
        {"command": "sleep 9"},
        {"command": "cat secrets"},
    ]
    results = of_type(session, "tool/result")
    assert [r["call"] for r in results] == [c["id"] for c in calls]
    assert [(r.get("error", False), r["exitCode"]) for r in results] == [
        (True, 2),
        (True, None),
        (False, 0),
    ]
    assert [e["status"] for e in of_type(session, "turn/end")] == [
        "completed",
        "cancelled",
        "completed",
    ]


def test_a_compaction_is_a_context_summary_through_the_entries_it_replaced(tmp_path: Path) -> None:
    s = PiSession(SID)
    s.user("one")
    s.assistant("first")
    kept = s.user("two")
    s.assistant("second")
    s.compaction("They said one and two.", kept, tokens_before=4242)
    s.user("three")
    s.assistant("third")
    [session] = read(s.write(tmp_path))
    [summary] = of_type(session, "context/summary")
    assert summary["text"] == "They said one and two."
    assert summary["tokensBefore"] == 4242
    assert summary["firstKeptEntryId"] == kept
    # `through` is the seq of the last event before the first kept entry's turn
    assert session.events[summary["through"]]["type"] == "turn/start"
    assert session.events[summary["through"]]["turn"] == f"turn:{kept}"
    replayed, _ = store_and_replay(tmp_path / "store", session)
    assert [m["content"] for m in replayed.transcript] == [
        "They said one and two.",
        "two",
        "second",
        "three",
        "third",
    ]


def test_custom_messages_branch_summaries_and_unknown_entries_are_kept(tmp_path: Path) -> None:
    s = PiSession(SID)
    s.user("one")
    s.assistant("first")
    s.custom_message("reminder", "Remember the tests", display=False)
    hook = s.custom_role_message("hook", "from an extension")
    s.branch_summary(hook, "We tried something else.")
    s.append("future_entry_type", payload={"x": 1})
    s.session_info("")
    s.assistant("second", redacted=True)
    [session] = read(s.write(tmp_path))
    assert session.unmapped == {
        "custom_message": 2,
        "future_entry_type": 1,
        "session_info": 1,
        "redacted_thinking": 1,
    }
    [summary] = of_type(session, "context/branch-summary")
    assert summary["text"] == "We tried something else."
    assert summary["fromId"] == hook
    [future] = of_type(session, "plugin/pi/future_entry_type")
    assert future["payload"] == {"x": 1}
    [redacted] = of_type(session, "plugin/pi/redacted_thinking")
    assert redacted["block"]["thinkingSignature"] == "opaque=="


# -- lineage --------------------------------------------------------------------------------


def test_every_leaf_is_a_fork_of_the_session_it_shares_most_with(tmp_path: Path) -> None:
    s, ids = branchy()
    main, b, c = read(s.write(tmp_path))
    assert main.id == f"pi-{SID}"
    assert messages(main) == [
        ("user", "one"),
        ("assistant", "first"),
        ("user", "two"),
        ("assistant", "second"),
        ("user", "five"),
        ("assistant", "fifth"),
    ]
    assert b.id == source_session_id("pi", SID, ids["q3"])
    assert b.created == b.events[5]["ts"]  # when it left the main line: its prompt "three"
    assert main.created < b.created
    assert (b.parent, b.relation) == (main.id, "fork")
    assert messages(b)[-2:] == [("user", "four"), ("assistant", "fourth")]
    # the third leaf leaves the second after a3: that is its parent, not the main line
    assert c.id == source_session_id("pi", SID, ids["q6"])
    assert (c.parent, c.relation) == (b.id, "fork")
    assert messages(c)[-2:] == [("user", "six"), ("assistant", "")]
    assert c.events[-1] == {
        "type": "turn/end",
        "ts": c.events[-2]["ts"],
        "turn": f"turn:{ids['q6']}",
        "status": "interrupted",
    }
    # shared entries give equal events, so the import verb finds the shared prefix
    assert without_src(b.events[:5]) == without_src(main.events[:5])
    assert b.events[5] != main.events[5]
    assert without_src(c.events[:9]) == without_src(b.events[:9])
    assert b.events[:5] == main.events[:5]  # one file: even src is the same


def test_a_fork_file_names_the_session_of_its_parent_file(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "--home-ada-project--"
    parent, ids = branchy()
    parent_path = parent.write(folder)
    parent_sessions = read(parent_path)
    # pi's /fork of branch B: its path, then one more turn
    b_path_lines = [
        line
        for line in parent.entry_lines()
        if orjson.loads(line)["id"] in {ids[k] for k in ("q1", "a1", "q3", "a3", "q4", "a4")}
    ]
    child = PiSession("0193a1b2-0000-7000-8000-00000000000c", parent_session=str(parent_path))
    child.adopt(b_path_lines)
    child.user("seven")
    child.assistant("seventh")
    child_path = child.write(folder)
    [fork] = read(child_path)
    assert (fork.parent, fork.relation) == (parent_sessions[1].id, "fork")
    shared = len(parent_sessions[1].events)
    assert without_src(fork.events[:shared]) == without_src(parent_sessions[1].events)
    assert fork.events[1]["src"] == {"id": child.session_id, "lines": [2]}
    # a fresh reader (no memory of the parent) finds the same parent
    assert PiReader().read(child_path)[0].parent == parent_sessions[1].id
    # the parent file gone: its id comes from its file name
    parent_path.unlink()
    assert PiReader().read(child_path)[0].parent == f"pi-{SID}"


def test_v1_files_are_upgraded_in_memory_with_stable_ids(tmp_path: Path) -> None:
    folder = tmp_path / "--home-ada-project--"
    extra = {"provider": PROVIDER, "modelId": MODEL, "thinkingLevel": "off"}
    parent = PiSession("11111111-1111-4111-8111-111111111111", version=1, header_extra=extra)
    parent.user("one")
    parent.assistant("first")
    parent.thinking_level("high")
    parent.user("two")
    parent.assistant("second")
    parent.compaction("one and two", 4)  # index 4: the second user message
    parent.user("three")
    parent.assistant("third")
    parent_path = settled(parent.write(folder))
    before = (parent_path.read_bytes(), parent_path.stat().st_mtime_ns)
    [p1] = READER.read(parent_path)
    assert PiReader().read(parent_path)[0].events == p1.events  # deterministic
    # never upgraded on disk (pi itself would rewrite it)
    assert (parent_path.read_bytes(), parent_path.stat().st_mtime_ns) == before
    assert p1.source.version == "1"
    assert messages(p1)[-1] == ("assistant", "third")
    [summary] = of_type(p1, "context/summary")
    assert p1.events[summary["through"]]["type"] == "turn/start"
    assert messages(p1)[2] == ("user", "two")
    # a v1 branch file repeats its parent's lines: equal ids, equal events
    child = PiSession(
        "22222222-2222-4222-8222-222222222222",
        version=1,
        parent_session=str(parent_path),
        header_extra=extra,
    )
    child.adopt(parent.entry_lines()[:2])
    child.user("other")
    child.assistant("another")
    [c1] = read(child.write(folder))
    assert c1.parent == p1.id
    assert c1.relation == "fork"
    assert without_src(c1.events[:5]) == without_src(p1.events[:5])


def test_v2_hook_messages_are_custom_messages(tmp_path: Path) -> None:
    s = PiSession(SID, version=2)
    s.user("one")
    s.custom_role_message("greeter", "hello from a hook")
    s.assistant("first")
    [session] = read(s.write(tmp_path))
    [hook] = of_type(session, "plugin/pi/custom_message")
    assert hook["message"]["role"] == "custom"
    assert hook["message"]["content"] == "hello from a hook"


# -- the store accepts what the reader makes ------------------------------------------------


def test_imported_sessions_are_valid_forkwise_logs(tmp_path: Path) -> None:
    s, _ = branchy()
    sessions = read(s.write(tmp_path / "pi"))
    sessions += read(coding_session().write(tmp_path / "pi2"))
    for n, session in enumerate(sessions):
        replayed, stored = store_and_replay(tmp_path / f"store{n}", session)
        assert [(m.role, m.text) for m in replayed.messages] == messages(session)
        assert [{k: v for k, v in r.items() if k != "seq"} for r in stored] == session.events
        assert replayed.open_turn is None
        calls = [c["id"] for m in replayed.messages for c in m.tool_calls]
        answered = {r["call"] for r in of_type(session, "tool/result")}
        assert set(calls) - answered <= {"c"}  # the abandoned branch's unanswered call


# -- files, roots, sniffing, bad input ------------------------------------------------------


def test_roots_files_and_sniffing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert READER.default_roots({}, home) == [home / ".pi" / "agent" / "sessions"]
    assert READER.default_roots({"PI_CODING_AGENT_DIR": "~/pi"}, home) == [home / "pi" / "sessions"]
    assert READER.default_roots(
        {"PI_CODING_AGENT_DIR": "/opt/pi", "PI_CODING_AGENT_SESSION_DIR": "/s"}, home
    ) == [Path("/opt/pi/sessions"), Path("/s")]
    folder = tmp_path / "sessions"
    a = coding_session("a").write(folder / "--x--")
    b = coding_session("b").write(folder / "--y--")
    (folder / "notes.txt").write_text("x")
    assert list(READER.session_files(folder)) == sorted([a, b])
    assert list(READER.session_files(a)) == [a]
    assert READER.sniff(a.read_bytes()[:4096])
    forkwise_header = b'{"type":"session","version":1,"id":"x","created":"2026-01-01T00:00:00Z","cwd":"/","parentSession":null,"seedLength":0,"meta":{}}\n'
    assert not READER.sniff(forkwise_header)
    assert not READER.sniff(b'{"timestamp":"2026","type":"session_meta","payload":{"id":"x"}}\n')
    assert not READER.sniff(b'{"type":"user","sessionId":"x","message":{}}\n')
    assert not READER.sniff(b"not json\n")


@pytest.mark.parametrize("line", [b"{not json", b"[1, 2]"])
def test_a_line_that_is_not_json_is_kept_with_a_warning(tmp_path: Path, line: bytes) -> None:
    """The entry after the lost line names it as its parent: the path goes on through
    the line kept in its place, and the session keeps its whole conversation."""
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}'
    q = b'{"type":"message","id":"q1","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}'
    a = b'{"type":"message","id":"a2","parentId":"lost","timestamp":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"stopReason":"stop"}}'
    path = tmp_path / "torn.jsonl"
    path.write_bytes(b"\n".join([header, q, line, a]) + b"\n")
    (main,) = READER.read(path)
    kept = [e for e in main.events if e["type"] == "plugin/pi/unreadable"]
    assert [(e["text"], e["src"]["lines"]) for e in kept] == [(line.decode(), [3])]
    texts = [p["text"] for e in main.events if e["type"] == "message" for p in e["parts"]]
    assert texts == ["hi", "hello"]
    assert [(w.line, w.code, w.path) for w in main.warnings] == [(3, "unreadable-line", str(path))]


@pytest.mark.parametrize(
    ("line", "expected_line", "words"),
    [
        (b'{"id":"x","parentId":null}', 3, "no type"),
        (b'{"type":"message","parentId":null,"message":{"role":"user","content":"x"}}', 3, "no id"),
        (
            b'{"type":"message","id":"q1","parentId":null,"message":{"role":"user","content":"again"}}',
            3,
            "duplicate",
        ),
        (b'{"type":"message","id":"zz","parentId":null,"message":"hi"}', 3, "role"),
        (
            b'{"type":"session","version":3,"id":"y","timestamp":"t","cwd":"/"}',
            3,
            "second session header",
        ),
    ],
)
def test_a_bad_line_fails_the_file_naming_the_line(
    tmp_path: Path, line: bytes, expected_line: int, words: str
) -> None:
    good = b'{"type":"message","id":"q1","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}'
    tail = b'{"type":"message","id":"a1","parentId":"q1","timestamp":"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[]}}'
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}'
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join([header, good, line, tail]) + b"\n")
    with pytest.raises(FormatError) as caught:
        READER.read(path)
    assert caught.value.line == expected_line
    assert caught.value.code == "import-failed"
    assert words in caught.value.message
    assert caught.value.path == str(path)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n",
        b'{"type":"message"}\n',
        b'{"type":"session","version":9,"id":"s","timestamp":"t","cwd":"/"}\n',
    ],
)
def test_a_file_without_a_usable_header_fails_on_line_1(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(FormatError) as caught:
        READER.read(path)
    assert caught.value.line == 1


def test_a_parent_cycle_is_an_error_not_a_hang(tmp_path: Path) -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}'
    a = b'{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"user","content":"x"}}'
    b = b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"y"}}'
    path = tmp_path / "cycle.jsonl"
    path.write_bytes(b"\n".join([header, a, b]) + b"\n")
    with pytest.raises(FormatError) as caught:
        READER.read(path)
    assert caught.value.line in (2, 3)


def test_a_branch_reads_as_its_own_path_would(tmp_path: Path) -> None:
    """Branches reuse their parent's conversion; they must equal a conversion of their
    whole path from the root (here: a retried answer with another model mid-turn, a
    branch off a branch, a branch from before the first prompt)."""
    s, ids = branchy()
    s.branch(ids["q2"])
    s.assistant("second, by another model", provider="openai", model="gpt-5")
    s.branch(ids["q3"])
    s.assistant(calls=(("r", "read", {"path": "y"}),))
    s.tool_result("r", "read", "Y")
    s.thinking_level("low")
    s.user("eight")
    s.assistant("eighth")
    s.branch(None)
    s.user("a second root")
    s.assistant("alone")
    s.branch(ids["a5"])
    s.user("last")
    s.assistant("the end")
    path = settled(s.write(tmp_path))
    sessions = READER.read(path)
    assert len(sessions) == 6
    file = pi_entries.load(path)
    for session, branch in zip(sessions, plan(file)[0], strict=True):
        assert session.id == branch.id
        assert session.events == PathConverter(SID, file.header["timestamp"]).convert(branch.path)
    retried = next(s for s in sessions if "gpt-5" in str(s.events))
    selects = [e for e in retried.events if e["type"] == "model/select"]
    assert [(m["model"]) for m in selects][-1] == "gpt-5"


def test_a_fork_of_a_whole_tree_leaves_the_parent_files_branches_to_it(tmp_path: Path) -> None:
    """`pi --fork` copies every entry, abandoned branches too: those stay the parent
    file's; a copied branch someone continued in the fork is a fork of the parent's."""
    folder = tmp_path / "--home-ada-project--"
    parent, ids = branchy()
    parent_path = parent.write(folder)
    main, b, _ = read(parent_path)
    child = PiSession("0193a1b2-0000-7000-8000-0000000000f0", parent_session=str(parent_path))
    child.adopt(parent.entry_lines())
    child.branch(ids["a4"])
    child.user("continue b")
    child.assistant("continued")
    child.branch(ids["a5"])
    child.user("on the main line")
    child.assistant("ok")
    sessions = read(child.write(folder))
    assert [s.parent for s in sessions] == [main.id, b.id]
    assert messages(sessions[1])[-2:] == [("user", "continue b"), ("assistant", "continued")]
    assert without_src(sessions[1].events[: len(b.events)]) == without_src(b.events)


def test_an_answer_with_no_prompt_before_it_opens_its_own_turn(tmp_path: Path) -> None:
    """An extension's custom message can make pi answer without a typed prompt."""
    s = PiSession(SID)
    s.bash("make", "ok\n")
    s.custom_message("ci-watcher", "The build finished", display=True)
    answer = s.assistant("The build is green.")
    s.user("thanks")
    s.assistant("You're welcome.")
    [session] = read(s.write(tmp_path))
    assert types(session)[5:11] == [
        "plugin/pi/custom_message",
        "model/select",
        "turn/start",
        "message",
        "turn/end",
        "turn/start",
    ]
    start = session.events[7]
    assert start["turn"] == f"turn:{answer}"
    assert start["src"] == session.events[8]["src"]
    store_and_replay(tmp_path / "store", session)


def test_a_relative_path_is_kept_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = coding_session(SID).write(tmp_path / "sessions")
    monkeypatch.chdir(tmp_path)
    [session] = read(Path("sessions") / path.name)
    assert session.source.path == str(path)

"""Reading Gemini CLI sessions: content, turns, rewinds as forks, subagents, checkpoints,
legacy files, bad lines, locations; and through the import verb: lineage stored once,
re-import unchanged, a grown file appended."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from gemini_fixtures import CWD, MODEL, SID, GeminiSession, coding_session, settled, tokens

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import FormatError, HoldsNothing, ImportedSession, source_session_id
from forkwise.core.formats.gemini import READER
from forkwise.core.host.importing import detect


def read(path: Path) -> list[ImportedSession]:
    return READER.read(settled(path))


def messages(session: ImportedSession) -> list[tuple[str, str]]:
    return [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
        for e in session.events
        if e["type"] == "message"
    ]


def of_type(session: ImportedSession, etype: str) -> list[dict[str, Any]]:
    return [e for e in session.events if e["type"] == etype]


def run_json(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*argv, "--json"], out=out, err=err)
    return code, orjson.loads(out.getvalue() or "null")


def rows(store: Path) -> dict[str, Any]:
    code, listed = run_json("sessions", "list", "--store", str(store))
    assert code == 0
    return {r["id"]: r for r in listed}


def stored_lines(store: Path, sid: str) -> list[bytes]:
    return (store / "sessions" / f"{sid}.jsonl").read_bytes().splitlines()


# -- one session ------------------------------------------------------------------------------


def test_a_session_maps_prompts_answers_thoughts_tools_and_usage(tmp_path: Path) -> None:
    path = coding_session().write(tmp_path / ".gemini")
    [session] = read(path)
    assert session.id == f"gemini-{SID}"
    assert (session.parent, session.relation) == (None, None)
    assert session.cwd == CWD  # from tmp/<slug>/.project_root
    assert session.created == "2026-03-02T09:15:00.000Z"
    assert session.title == "Summarise the README"
    assert (session.source.tool, session.source.id, session.source.path) == (
        "gemini",
        SID,
        str(path),
    )
    assert messages(session) == [
        ("user", "Read the README and summarise it"),
        ("assistant", ""),
        ("assistant", "The README describes a small demo project."),
        ("user", "Now list the source folder"),
        ("assistant", "There is one file: main.py."),
    ]
    call = of_type(session, "message")[1]
    # the message was written twice (its tool call finished, its tokens came): the last wins
    assert call["parts"] == [
        {"type": "reasoning", "text": "**Planning**\n\nI should read the file first"},
        {
            "type": "tool_call",
            "id": "read_file-1-aa",
            "name": "read_file",
            "args": {"absolute_path": f"{CWD}/README.md"},
        },
    ]
    [result] = of_type(session, "tool/result")
    assert (result["call"], result["tool"], result["output"]) == (
        "read_file-1-aa",
        "read_file",
        "# Demo\nA small demo.",
    )
    assert "error" not in result
    assert [e["model"] for e in of_type(session, "model/select")] == [MODEL]
    usage = of_type(session, "plugin/gemini/usage")
    assert [u["tokens"]["input"] for u in usage] == [100, 120, 200]
    assert session.unmapped == {"usage": 3}
    assert [e["status"] for e in of_type(session, "turn/end")] == ["completed", "completed"]
    types = [e["type"] for e in session.events]
    assert types.count("turn/start") == 2
    assert types[0] == "turn/start"
    assert types[-1] == "turn/end"
    # every event made from a line names it
    for event in session.events:
        if event["type"] != "turn/end":
            assert event["src"]["id"] == SID
            assert event["src"]["lines"][0] >= 2


def test_failed_and_cancelled_calls_errors_and_notices(tmp_path: Path) -> None:
    s = GeminiSession()
    s.user("Run the tests")
    s.tool_calls(
        [
            {"id": "sh-1", "name": "run_shell_command", "args": {"command": "pytest"},
             "status": "error",
             "result": [{"functionResponse": {"id": "sh-1", "name": "run_shell_command",
                                              "response": {"error": "exit 1"}}}]},
        ]
    )
    s.info("info", "Switched to fallback model")
    s.info("error", "[API Error: quota exceeded]")
    s.user("Try again")
    s.tool_calls([{"id": "sh-2", "name": "run_shell_command", "args": {"command": "pytest"},
                   "status": "cancelled"}])
    s.user("Never mind")
    [session] = read(s.write(tmp_path / ".gemini"))
    results = of_type(session, "tool/result")
    assert [(r["call"], r.get("error"), r["output"]) for r in results] == [
        ("sh-1", True, "exit 1"),
        ("sh-2", True, ""),
    ]
    assert [e["status"] for e in of_type(session, "turn/end")] == [
        "failed",
        "cancelled",
        "interrupted",
    ]
    assert [e["content"] for e in of_type(session, "plugin/gemini/info")] == [
        "Switched to fallback model"
    ]
    assert len(of_type(session, "plugin/gemini/error")) == 1


def test_an_unanswered_last_turn_stays_open_only_while_the_file_is_written(
    tmp_path: Path,
) -> None:
    s = GeminiSession()
    s.user("Hello")
    path = s.write(tmp_path / ".gemini")
    [live] = READER.read(path)  # just written: Gemini CLI may still be answering
    assert [e["type"] for e in live.events] == ["turn/start", "message"]
    [done] = read(path)
    assert of_type(done, "turn/end")[-1]["status"] == "interrupted"


# -- lineage ----------------------------------------------------------------------------------


def rewound() -> tuple[GeminiSession, str, str]:
    s = GeminiSession()
    s.user("Write a haiku about the sea")
    s.gemini("Waves fold into foam.", usage=tokens())
    second = s.user("Now one about the mountains")
    asked = s.messages[second]["timestamp"]
    s.gemini("Stone holds up the sky.", usage=tokens())
    s.rewind(second)
    s.user("Now one about the forest")
    s.gemini("Green light, slow and deep.", usage=tokens())
    return s, second, asked


def test_a_rewind_is_a_fork_holding_what_it_abandoned(tmp_path: Path) -> None:
    s, second, asked = rewound()
    main, branch = read(s.write(tmp_path / ".gemini"))
    assert messages(main) == [
        ("user", "Write a haiku about the sea"),
        ("assistant", "Waves fold into foam."),
        ("user", "Now one about the forest"),
        ("assistant", "Green light, slow and deep."),
    ]
    assert messages(branch) == [
        ("user", "Write a haiku about the sea"),
        ("assistant", "Waves fold into foam."),
        ("user", "Now one about the mountains"),
        ("assistant", "Stone holds up the sky."),
    ]
    assert branch.id == source_session_id("gemini", SID, second)  # from what it lost first
    assert (branch.parent, branch.relation) == (main.id, "fork")
    assert branch.title == "Now one about the mountains"
    assert branch.created == asked  # when it left the main line
    # the shared turn is the same records in both (what the import stores once)
    strip = [{k: v for k, v in e.items() if k != "src"} for e in main.events[:5]]
    assert strip == [{k: v for k, v in e.items() if k != "src"} for e in branch.events[:5]]


def test_a_rewind_to_the_start_and_a_second_rewind(tmp_path: Path) -> None:
    s = GeminiSession()
    first = s.user("First try")
    s.gemini("Answer one.")
    s.rewind(first)
    s.user("Second try")
    s.gemini("Answer two.")
    s.user("Follow-up")
    s.gemini("Answer three.")
    s.rewind("no-such-id")  # Gemini CLI drops everything then
    s.user("Third try")
    s.gemini("Answer four.")
    main, b1, b2 = read(s.write(tmp_path / ".gemini"))
    assert messages(main) == [("user", "Third try"), ("assistant", "Answer four.")]
    assert messages(b1) == [("user", "First try"), ("assistant", "Answer one.")]
    assert [t for _, t in messages(b2)] == ["Second try", "Answer two.", "Follow-up", "Answer three."]
    assert b1.parent == b2.parent == main.id


def test_the_import_stores_a_rewind_as_a_fork_sharing_its_prefix_once(tmp_path: Path) -> None:
    s, _, _ = rewound()
    gemini = tmp_path / ".gemini"
    settled(s.write(gemini))
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "gemini", str(gemini), "--store", str(store))
    assert code == 0, report
    main_id = f"gemini-{SID}"
    assert len(report["imported"]) == 2
    assert report["failed"] == []
    listed = rows(store)
    [branch_id] = [sid for sid in listed if sid != main_id]
    assert listed[branch_id]["parentSession"] == main_id
    assert listed[branch_id]["relation"] == "fork"
    seed = listed[branch_id]["seedLength"]
    assert seed == 6  # the first turn: turn/start, prompt, model/select, answer, usage, end
    # the seed is stored once: the branch's file names where it is and holds its own lines
    header, first_own = (orjson.loads(line) for line in stored_lines(store, branch_id)[:2])
    assert (header["seedIn"]["session"], header["seedIn"]["events"]) == (main_id, seed)
    assert (first_own["seq"], first_own["type"]) == (seed + 1, "history/fork")
    # the same sources again: nothing touched
    before = {p.name: p.stat().st_mtime_ns for p in (store / "sessions").glob("*.jsonl")}
    code, again = run_json("sessions", "import", "--from", "gemini", str(gemini), "--store", str(store))
    assert code == 0
    assert sorted(again["unchanged"]) == sorted([main_id, branch_id])
    assert again["imported"] == again["updated"] == []
    assert {p.name: p.stat().st_mtime_ns for p in (store / "sessions").glob("*.jsonl")} == before


def test_a_grown_file_appends_only_its_new_events(tmp_path: Path) -> None:
    s = coding_session()
    gemini = tmp_path / ".gemini"
    path = settled(s.write(gemini))
    store = tmp_path / "store"
    code, _ = run_json("sessions", "import", str(path), "--store", str(store))  # recognised
    assert code == 0
    sid = f"gemini-{SID}"
    before = (store / "sessions" / f"{sid}.jsonl").read_bytes()
    s.user("And the tests folder?")
    s.gemini("It holds test_main.py.", usage=tokens())
    settled(s.write(gemini))
    code, report = run_json("sessions", "import", str(path), "--store", str(store))
    assert code == 0
    assert report["updated"] == [sid]
    after = (store / "sessions" / f"{sid}.jsonl").read_bytes()
    assert after.startswith(before)
    assert b"It holds test_main.py." in after[len(before) :]


def test_a_subagent_file_is_a_subagent_child_of_its_session(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    settled(coding_session().write(gemini))
    child_sid = "9a8b7c6d-0000-4000-a000-000000000001"
    sub = GeminiSession(child_sid, kind="subagent")
    sub.user("Investigate the failing import")
    sub.gemini("The module path was wrong.")
    path = settled(sub.write(gemini, parent=SID))
    assert path.parent.name == SID
    [child] = read(path)
    assert (child.id, child.parent, child.relation) == (
        f"gemini-{child_sid}",
        f"gemini-{SID}",
        "subagent",
    )
    assert child.cwd == CWD
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "gemini", str(gemini), "--store", str(store))
    assert code == 0, report
    listed = rows(store)
    assert listed[f"gemini-{child_sid}"]["parentSession"] == f"gemini-{SID}"
    assert listed[f"gemini-{child_sid}"]["relation"] == "subagent"


def test_a_checkpoint_replaces_the_whole_list(tmp_path: Path) -> None:
    s = GeminiSession()
    s.user("One")
    s.gemini("Reply one.")
    s.user("Two")
    s.gemini("Reply two.")
    # Gemini CLI's history sync: the list rewritten whole (here without the first turn)
    first = list(s.messages)[:2]
    for mid in first:
        del s.messages[mid]
    s.checkpoint()
    [session] = read(s.write(tmp_path / ".gemini"))
    assert messages(session) == [("user", "Two"), ("assistant", "Reply two.")]


def test_a_legacy_json_file_reads_unless_it_was_migrated(tmp_path: Path) -> None:
    s = coding_session()
    chats = tmp_path / ".gemini" / "tmp" / "project" / "chats"
    chats.mkdir(parents=True)
    legacy = {**s.lines[0], "summary": "Old one", "messages": list(s.messages.values())}
    path = chats / "session-2025-01-01T10-00-4f2b6c1e.json"
    path.write_bytes(orjson.dumps(legacy, option=orjson.OPT_INDENT_2))
    assert detect(settled(path)) == "gemini"
    [session] = read(path)
    assert session.title == "Old one"
    assert session.source.version == "json"
    assert [t for _, t in messages(session)][-1] == "There is one file: main.py."
    assert list(READER.session_files(tmp_path / ".gemini" / "tmp")) == [path]
    migrated = path.with_name(path.name + "l")
    migrated.write_bytes(s.data())
    # after a resume Gemini CLI keeps both: the .jsonl is the session
    assert list(READER.session_files(tmp_path / ".gemini" / "tmp")) == [migrated]


# -- bad input, locations ---------------------------------------------------------------------


def test_a_torn_last_line_is_left_for_the_next_read(tmp_path: Path) -> None:
    s = coding_session()
    path = s.write(tmp_path / ".gemini")
    with path.open("ab") as f:
        f.write(b'{"id":"half","type":"user","content":[{"te')
    [session] = read(path)
    assert messages(session)[-1] == ("assistant", "There is one file: main.py.")


@pytest.mark.parametrize(
    ("line", "words"),
    [(b"{not json", "is not JSON"), (b"[1, 2]", "not a JSON object")],
)
def test_a_bad_line_in_the_middle_is_kept_with_a_warning(
    tmp_path: Path, line: bytes, words: str
) -> None:
    """As in the other tools' files: the line is kept where it stands as
    plugin/gemini/unreadable and named in the session's warnings; every message after
    it is still read (before, the whole file failed)."""
    path = settled(coding_session().write(tmp_path / ".gemini"))
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([*lines[:3], line, *lines[3:]]) + b"\n")
    [session] = read(path)
    assert [(w.line, w.code) for w in session.warnings] == [(4, "unreadable-line")]
    assert words in session.warnings[0].message
    kept = [e for e in session.events if e["type"] == "plugin/gemini/unreadable"]
    assert [(e["text"], e["src"]["lines"]) for e in kept] == [(line.decode(), [4])]
    assert session.unmapped["unreadable"] == 1
    assert messages(session)[-1] == ("assistant", "There is one file: main.py.")
    # where it stands: after the prompt of line 2, before what followed it in the file
    order = [e["src"]["lines"][0] for e in session.events if "src" in e]
    assert order.index(4) == len([n for n in order if n < 4])


def test_a_bad_first_line_fails_the_file_naming_it(tmp_path: Path) -> None:
    """Without its metadata line a file is no Gemini CLI session: it fails, line 1."""
    path = coding_session().write(tmp_path / ".gemini")
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([b"{not json", *lines[1:]]) + b"\n")
    with pytest.raises(FormatError, match="not a JSON object") as caught:
        read(path)
    assert caught.value.line == 1
    store = tmp_path / "store"
    code, report = run_json("sessions", "import", "--from", "gemini", str(path), "--store", str(store))
    assert code == 1
    assert (report["failed"][0]["line"], report["failed"][0]["path"]) == (1, str(path))


def test_a_file_without_a_session_id_fails_on_line_1(tmp_path: Path) -> None:
    path = tmp_path / "session-x.jsonl"
    path.write_bytes(b'{"id":"m1","type":"user","content":"hi"}\n')
    with pytest.raises(FormatError) as caught:
        read(path)
    assert caught.value.line == 1


def test_default_location_and_sniffing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    assert READER.default_roots({}, home) == [home / ".gemini" / "tmp"]
    assert READER.default_roots({"GEMINI_CLI_HOME": str(tmp_path / "g")}, home) == [
        tmp_path / "g" / ".gemini" / "tmp"
    ]
    path = settled(coding_session().write(home / ".gemini"))
    (home / ".gemini" / "tmp" / "project" / "logs.json").write_text("[]")
    assert READER.sniff(path.read_bytes()[:8192])
    assert not READER.sniff(b'{"type":"user","sessionId":"x","message":{}}\n')
    assert not READER.sniff(b'{"timestamp":"2026","type":"session_meta","payload":{"id":"x"}}\n')
    store = tmp_path / "store"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    code, report = run_json("sessions", "import", "--from", "gemini", "--store", str(store))
    assert code == 0, report
    assert report["imported"] == [f"gemini-{SID}"]


def test_gemini_clis_own_context_is_kept_outside_the_turns(tmp_path: Path) -> None:
    s = GeminiSession()
    context = {"id": "ctx1", "timestamp": s.start, "type": "user",
               "content": [{"text": "<session_context>\nToday is Friday.\n</session_context>"}]}
    s.lines.append({"$set": {"messages": [context]}})  # how Gemini CLI 0.61 starts a file
    s.messages["ctx1"] = context
    s.user("Hello")
    s.gemini("Hi.")
    [session] = read(s.write(tmp_path / ".gemini"))
    assert messages(session) == [("user", "Hello"), ("assistant", "Hi.")]
    assert session.events[0]["type"] == "plugin/gemini/context"
    assert session.events[1]["type"] == "turn/start"


def test_a_file_with_nothing_but_context_gives_no_session(tmp_path: Path) -> None:
    """`gemini --resume <id> -p …` leaves a second file under the resumed id holding only
    Gemini CLI's context; Gemini CLI does not list it, and it must not stand for the
    session the first file holds."""
    s = GeminiSession()
    s.lines.append({"$set": {"messages": [{"id": "ctx1", "timestamp": s.start, "type": "user",
                                           "content": [{"text": "<session_context>x</session_context>"}]}]}})
    path = s.write(tmp_path / ".gemini")
    with pytest.raises(HoldsNothing):
        read(path)
    # an import reads it as what it is: nothing to bring in, and not a failure (the watch
    # would report it after every resume that starts in a later minute)
    code, report = run_json("sessions", "import", "--from", "gemini", str(path),
                            "--store", str(tmp_path / "store"))
    assert code == 0, report
    assert (report["imported"], report["failed"]) == ([], [])

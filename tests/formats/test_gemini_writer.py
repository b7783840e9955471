"""Writing Forkwise sessions as Gemini CLI sessions: where Gemini CLI lists them, the
source's own lines for what is shared, new turns as Gemini CLI records, read back whole."""

from __future__ import annotations

import io
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from gemini_fixtures import CWD, SID, coding_session, settled
from pi_export import export_input, forked_with_new_turns, last_turn_end

from forkwise.core.cli import main as cli
from forkwise.core.formats.base import ExportInput, FormatError, ImportedSession
from forkwise.core.formats.gemini import READER, WRITER


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def messages(session: ImportedSession) -> list[tuple[str, str]]:
    return [
        (e["role"], "".join(p["text"] for p in e["parts"] if p["type"] == "text"))
        for e in session.events
        if e["type"] == "message"
    ]


@pytest.fixture
def imported(tmp_path: Path) -> ImportedSession:
    path = settled(coding_session().write(tmp_path / "source" / ".gemini"))
    [session] = READER.read(path)
    return session


def test_an_imported_session_is_written_where_gemini_cli_lists_it(
    tmp_path: Path, imported: ImportedSession
) -> None:
    gemini = tmp_path / "home" / ".gemini"
    done = WRITER.export(export_input(imported), gemini, None)
    assert uuid.UUID(done.id).version == 4
    assert done.resume == f"gemini --resume {done.id}"
    assert done.path.parent == gemini / "tmp" / "project" / "chats"
    assert done.path.name.startswith("session-")
    assert done.path.name.endswith(f"-{done.id[:8]}.jsonl")
    # the project registered as Gemini CLI registers it
    registry = orjson.loads((gemini / "projects.json").read_bytes())
    assert registry == {"projects": {CWD: "project"}}
    assert (gemini / "tmp" / "project" / ".project_root").read_text() == CWD
    meta = orjson.loads(lines(done.path)[0])
    assert meta["sessionId"] == done.id
    assert meta["projectHash"] == coding_session().lines[0]["projectHash"]
    assert meta["summary"] == "Summarise the README"
    # each message is the source's own line (its last version), byte for byte
    source = lines(Path(imported.source.path))
    assert all(line in source for line in lines(done.path)[1:])
    assert len(lines(done.path)) == 1 + 5
    [back] = READER.read(settled(done.path))
    assert messages(back) == messages(imported)
    assert [e["type"] for e in back.events] == [e["type"] for e in imported.events]


def test_a_fork_with_turns_added_in_forkwise_continues_in_gemini_cli(
    tmp_path: Path, imported: ImportedSession
) -> None:
    boundary = last_turn_end(imported.events, before=len(imported.events) - 1)
    events = forked_with_new_turns(imported, boundary)
    done = WRITER.export(export_input(imported, events), tmp_path / ".gemini", None)
    [back] = READER.read(settled(done.path))
    assert messages(back) == [
        ("user", "Read the README and summarise it"),
        ("assistant", ""),
        ("assistant", "The README describes a small demo project."),
        ("user", "Try again, shorter"),
        ("assistant", ""),
        ("assistant", "A demo."),
    ]
    added = orjson.loads(lines(done.path)[-2])
    assert added["type"] == "gemini"
    assert added["model"] == "qwen3-coder"
    assert added["thoughts"][0]["description"] == "Look at the file again."
    [call] = added["toolCalls"]
    assert (call["name"], call["args"], call["status"]) == (
        "read_file",
        {"path": "README.md"},
        "success",
    )
    result: list[dict[str, Any]] = [e for e in back.events if e["type"] == "tool/result"]
    assert result[-1]["output"] == "# Demo"
    assert [e["status"] for e in back.events if e["type"] == "turn/end"] == ["completed"] * 2


def test_out_names_the_file_and_a_missing_folder_writes_nothing(
    tmp_path: Path, imported: ImportedSession
) -> None:
    out = tmp_path / "somewhere" / "x.jsonl"
    with pytest.raises(FormatError, match="does not exist"):
        WRITER.export(export_input(imported), tmp_path / ".gemini", out)
    assert not (tmp_path / "somewhere").exists()
    out.parent.mkdir()
    done = WRITER.export(export_input(imported), tmp_path / ".gemini", out)
    assert done.path == out
    assert not (tmp_path / ".gemini").exists()  # nothing registered for an explicit file


def test_a_project_with_a_slug_keeps_it_and_a_clash_gets_the_next(tmp_path: Path) -> None:
    from forkwise.core.formats.gemini.layout import project_slug

    gemini = tmp_path / ".gemini"
    assert project_slug(gemini, "/work/app") == "app"
    assert project_slug(gemini, "/work/app") == "app"
    assert project_slug(gemini, "/other/App") == "app-1"  # "app" is owned by /work/app
    assert orjson.loads((gemini / "projects.json").read_bytes())["projects"] == {
        "/work/app": "app",
        "/other/App": "app-1",
    }


def test_export_through_the_verb_prints_the_resume_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settled(coding_session().write(tmp_path / "source" / ".gemini"))
    store = tmp_path / "store"
    out = io.StringIO()
    code = cli.main(
        ["sessions", "import", "--from", "gemini", str(tmp_path / "source"), "--store", str(store)],
        out=out,
        err=io.StringIO(),
    )
    assert code == 0, out.getvalue()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    out = io.StringIO()
    code = cli.main(
        ["sessions", "export", f"gemini-{SID}", "--to", "gemini", "--store", str(store), "--json"],
        out=out,
        err=io.StringIO(),
    )
    assert code == 0, out.getvalue()
    made = orjson.loads(out.getvalue())
    assert made["resume"] == f"gemini --resume {made['id']}"
    assert Path(made["path"]).is_relative_to(tmp_path / "home" / ".gemini" / "tmp" / "project")


@pytest.mark.parametrize("tool", ["claude", "codex", "pi"])
def test_a_gemini_session_continues_in_the_other_agents_too(
    tmp_path: Path, imported: ImportedSession, tool: str
) -> None:
    """Its lines are Gemini CLI's: the other writers render its events as their own (the
    Codex writer copied them as rollout lines and failed: 'not a rollout line')."""
    from forkwise.core.host.importing import format_module

    module = format_module(tool)
    done = module.WRITER.export(export_input(imported), tmp_path / tool, None)
    back = module.READER.read(done.path)[0]
    assert [t for _, t in messages(back) if t] == [t for _, t in messages(imported) if t]


def test_a_session_without_a_title_is_listed_by_its_first_prompt(
    tmp_path: Path, imported: ImportedSession
) -> None:
    """Gemini CLI asks its model to summarise every listed session that has no summary
    (a request for each `gemini --list-sessions`, which took minutes to give up offline)."""
    plain = ExportInput(
        session_id="mine", cwd=CWD, title=None, created=imported.created,
        events=export_input(imported).events, sources={imported.source.id: imported.source},
    )
    done = WRITER.export(plain, tmp_path / ".gemini", None)
    assert orjson.loads(lines(done.path)[0])["summary"] == "Read the README and summarise it"

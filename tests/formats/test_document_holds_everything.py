"""Nothing a person said, an agent answered or a tool returned is lost from a document:
the fixture sessions of Claude Code, Codex and pi (the ones the importer tests use),
imported and exported through the CLI, hold every message's words (Markdown rendered in the
HTML, verbatim in the Markdown), a card for every tool call, and every result's words."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from claude_fixtures import project_file, rich_transcript
from codex_fixtures import basic
from document_checks import assert_self_contained, export, parse, run_json, tool_cards
from pi_fixtures import coding_session

from forkwise.core.log.prompts import read_prompt
from forkwise.core.reading.cards import output_text
from forkwise.core.store.backends.jsonl import JsonlBackend
from forkwise.core.store.session_store import SessionStore


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text))


def _write(tool: str, folder: Path) -> Path:
    if tool == "claude":
        t = rich_transcript()
        return t.write(project_file(folder, t))
    if tool == "codex":
        return basic().write(folder)
    return coding_session().write(folder)


@pytest.mark.parametrize("tool", ["claude", "codex", "pi"])
def test_every_message_call_and_result_is_in_both_documents(tool: str, tmp_path: Path) -> None:
    source = _write(tool, tmp_path / tool)
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", tool, str(source), "--store", store)
    assert code == 0, report
    (sid,) = report["imported"]
    read = SessionStore(JsonlBackend(Path(store), writable=False))
    events: list[dict[str, Any]] = [e.to_record() for e in read.get(sid).events]
    read.close()
    html = export(store, sid, "html", tmp_path / "s.html")
    text = export(store, sid, "markdown", tmp_path / "s.md")
    tree = parse(html)
    assert_self_contained(tree, html)
    shown = words(tree.root.all_text())
    said: list[str] = []
    calls = 0
    for event in events:
        if event["type"] == "message":
            for part in event.get("parts") or ():
                if part.get("type") in ("text", "reasoning") and part.get("text"):
                    said.append(read_prompt(part["text"]).text)
                calls += part.get("type") == "tool_call"
        elif event["type"] == "tool/result":
            said.append(output_text(event.get("output")))
    said = [s for s in said if s.strip()]
    assert len(said) >= 5
    for piece in said:
        assert words(piece) in shown, piece
        assert piece.strip() in text, piece
    web = sum(e["type"] == "plugin/codex/web_search_call" for e in events)
    assert calls > 0
    assert len(tool_cards(tree)) == calls + web

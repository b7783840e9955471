"""The transcript's fold puts every image of a real-format session where it belongs: a
prompt's pasted image with its prompt (Claude Code's image block, Codex's input image,
pi's image content), a tool result's image with its call (pi's). The transcript, Compare
and the exports all read it there; the HTML shows the pasted image inside its prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_claude_document as claude_doc
from claude_fixtures import project_file
from codex_fixtures import Rollout, thread_id
from document_checks import export, parse, run_json, walk
from pi_fixtures import PiSession

from forkwise.core.formats.claude import READER as CLAUDE
from forkwise.core.formats.codex.reader import READER as CODEX
from forkwise.core.formats.pi.reader import READER as PI
from forkwise.core.reading.cards import card_of
from forkwise.core.reading.entries import TOOL, USER, Entry, build

PNG = claude_doc.PNG


def _entries(events: list[dict[str, Any]]) -> list[Entry]:
    """The fold of an imported session's events, numbered as the store numbers them."""
    return build([{**e, "seq": n} for n, e in enumerate(events, 1)]).entries


def _prompt(entries: list[Entry], text: str) -> Entry:
    (found,) = [e for e in entries if e.kind == USER and e.text.startswith(text)]
    return found


def test_a_claude_code_pasted_image_is_its_prompts(tmp_path: Path) -> None:
    t = claude_doc.session()
    path = t.write(project_file(tmp_path / "claude", t))
    main = CLAUDE.read(path)[0]
    entries = _entries(main.events)
    shot = _prompt(entries, "What is in this screenshot?")
    assert [(i.mime, i.b64) for i in shot.images] == [("image/png", PNG)]
    # no other entry took it; the Read's image stays its card's (inside its result)
    assert sum(len(e.images) for e in entries) == 1
    (read,) = [e for e in entries if e.kind == TOOL and e.data.get("args", {}).get(
        "file_path") == "/p/shot.png"]
    assert [i.b64 for i in card_of(read).images] == [PNG]


def test_a_codex_input_image_is_its_prompts(tmp_path: Path) -> None:
    r = Rollout(thread_id(72)).meta()
    r.event("task_started", turn_id="t1", model_context_window=272000)
    r.item("message", role="user", content=[
        {"type": "input_text", "text": "fix the app, see the screenshot"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}])
    r.answer("Looking at it.")
    r.event("task_complete", turn_id="t1", last_agent_message="done")
    main = CODEX.read(r.write(tmp_path / "codex"))[0]
    entries = _entries(main.events)
    prompt = _prompt(entries, "fix the app")
    assert [i.b64 for i in prompt.images] == [PNG]
    assert sum(len(e.images) for e in entries) == 1


def test_pi_images_go_to_their_prompt_and_their_tool_call(tmp_path: Path) -> None:
    s = PiSession("0193a1b2-0000-7000-8000-00000000d0c6")
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.user("tidy the code", images=(PNG,))
    s.assistant("Looking.", calls=(("p5", "screenshot", {"page": "home"}),))
    s.tool_result("p5", "screenshot", "Captured", images=(PNG,))
    s.user("and now?")
    s.assistant("Done.")
    main = PI.read(s.write(tmp_path / "pi"))[0]
    entries = _entries(main.events)
    assert [i.b64 for i in _prompt(entries, "tidy the code").images] == [PNG]
    assert _prompt(entries, "and now?").images == []
    (shot,) = [e for e in entries if e.kind == TOOL]
    assert [i.b64 for i in shot.images] == [PNG]
    assert [i.b64 for i in card_of(shot).images] == [PNG]


@pytest.mark.parametrize("to", ["html", "markdown"])
def test_the_export_shows_the_pasted_image_with_its_prompt(tmp_path: Path, to: str) -> None:
    t = claude_doc.session()
    t.write(project_file(tmp_path / "claude", t))
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", "claude", str(tmp_path / "claude"),
                            "--store", store)  # fmt: skip
    assert code == 0, report
    text = export(store, f"claude-{claude_doc.SID}", to, tmp_path / f"doc.{to}")
    if to == "markdown":
        prompt = text.index("What is in this screenshot?")
        assert text.index("![pasted image](data:image/png;base64,", prompt) < text.index(
            "A single pixel.")
        return
    (message,) = [n for n in parse(text).nodes if "user" in n.classes()
                  and "What is in this screenshot?" in n.all_text()]
    assert [n.attrs["alt"] for n in walk(message) if n.tag == "img"] == ["pasted image"]

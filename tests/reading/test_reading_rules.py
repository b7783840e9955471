"""The reading rules on their own (Qt-free): a prompt's slash command and system noise,
Markdown and highlighted code as HTML, diffs from each agent's record, images."""

from __future__ import annotations

import base64

import pytest

from forkwise.core.log.prompts import read_prompt, title_text
from forkwise.core.reading.cards import TODO, card_of, output_text
from forkwise.core.reading.diffs import (
    ADDED,
    CONTEXT,
    HUNK,
    REMOVED,
    from_apply_patch,
    from_structured_patch,
    from_texts,
)
from forkwise.core.reading.entries import TOOL, Entry
from forkwise.core.reading.images import from_data_url, image_of, in_output
from forkwise.core.reading.markup import CODE_CSS, code_block, highlight, language_of, markdown


@pytest.mark.parametrize(("typed", "shown"), [
    ("<command-message>init is analyzing your codebase…</command-message>\n"
     "<command-name>/init</command-name>", "/init"),
    ("<command-name>/model</command-name>\n<command-message>model</command-message>\n"
     "<command-args>opus</command-args>", "/model opus"),
    ("<command-name>review</command-name><command-args>PR 12</command-args>", "/review PR 12"),
    ("<bash-input>git status</bash-input>", "! git status"),
    ("plain question, 2 < 3", "plain question, 2 < 3"),
])
def test_a_prompt_reads_as_typed(typed: str, shown: str) -> None:
    assert read_prompt(typed).text == shown


def test_system_noise_is_set_apart() -> None:
    prompt = read_prompt(
        "<local-command-caveat>Caveat: generated locally</local-command-caveat>"
        "fix it<system-reminder>\nfile opened\n</system-reminder>")
    assert prompt.text == "fix it"
    assert prompt.folded == [("Caveat", "Caveat: generated locally"),
                             ("System reminder", "file opened")]


def test_a_title_cut_inside_the_markup_still_names_the_command() -> None:
    # the importer shortens the first prompt to 100 characters, closing tag cut
    cut = ("<command-message>init is analyzing your codebase…</command-message> "
           "<command-name>/init</command-na…")
    assert title_text(cut) == "/init"
    assert title_text("Fix the login form") == "Fix the login form"


def test_markdown_renders_github_extensions_and_escapes_html() -> None:
    out = markdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n"
                   "~~old~~ www.example.com <script>x()</script>")
    assert "<table" in out
    assert "<td>1</td>" in out
    assert "☑ done" in out
    assert "☐ todo" in out
    assert "<s>old</s>" in out
    assert '<a href="http://www.example.com">' in out
    assert "<script>" not in out
    assert "&lt;script&gt;" in out


def test_code_keeps_its_spaces_and_is_highlighted_by_language_or_extension() -> None:
    fenced = markdown("```python\nif x:\n    return 1\n```\n")
    assert "<pre style=" in fenced
    assert "\n    <span" in fenced  # the indent is kept, before the highlighted keyword
    indented = markdown("    keep\n      these spaces\n")
    assert "<pre style=" in indented
    assert "keep\n  these spaces" in indented
    shown = highlight("const x = 1;", filename="src/a.ts")
    (cls,) = {part.partition('"')[0] for part in shown.split('<span class="')[1:2]}
    assert f"span.{cls} {{ color:" in CODE_CSS  # a class the style sheet colours
    assert highlight("a < b", filename="notes.unknownext") == "a &lt; b"
    assert language_of("src/app.py") == "python"
    assert "</code></pre>" in code_block("x = 1\n", "python")
    assert not code_block("x = 1\n", "python").count("\n</code>")


def test_structured_patch_lines_are_numbered_from_its_hunks() -> None:
    lines = from_structured_patch([{"oldStart": 40, "oldLines": 2, "newStart": 41,
                                    "newLines": 2, "lines": [" keep", "-old", "+new"]}])
    assert lines is not None
    assert [(x.kind, x.old, x.new, x.text) for x in lines[1:]] == [
        (CONTEXT, 40, 41, "keep"), (REMOVED, 41, None, "old"), (ADDED, None, 42, "new")]
    assert lines[0].kind == HUNK


def test_difflib_and_apply_patch_diffs() -> None:
    lines = from_texts("a\nb\nc\n", "a\nB\nc\n")
    assert [(x.kind, x.old, x.new) for x in lines if x.kind in (REMOVED, ADDED)] == [
        (REMOVED, 2, None), (ADDED, None, 2)]
    files = from_apply_patch("*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n"
                             "@@ def f\n-x\n+y\n*** Delete File: c.py\n*** End Patch\n")
    assert [(f.path, f.action) for f in files] == [("a.py → b.py", "move"), ("c.py", "delete")]
    assert files[0].unified() == "@@ def f\n-x\n+y"


def test_images_carry_their_bytes_and_only_image_types() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nrest").decode()
    found = image_of({"type": "plugin/pi/image", "mimeType": "image/png", "data": png,
                      "call": "c1"})
    assert found is not None
    assert found.data()[:4] == b"\x89PNG"
    assert found.call == "c1"
    assert found.data_uri().startswith("data:image/png;base64,")
    assert from_data_url("data:text/html;base64,PHNjcmlwdD4=") is None
    assert from_data_url("https://example.com/a.png") is None
    claude = [{"type": "text", "text": "shot"},
              {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                           "data": png}}]
    assert [i.mime for i in in_output(claude)] == ["image/jpeg"]
    assert output_text(claude) == "shot"


def test_a_failed_read_shows_its_error_not_file_lines() -> None:
    card = card_of(Entry(TOOL, 5, data={"name": "read", "args": {"path": "MISSING.md"},
                                        "result": "ENOENT: no such file", "is_error": True}))
    assert card.failed
    assert card.title == "MISSING.md"
    assert [(s.kind, s.label, s.text) for s in card.sections] == [
        ("text", "error", "ENOENT: no such file")]


def test_a_todo_card_and_an_unknown_tool() -> None:
    todo = card_of(Entry(TOOL, 3, data={"name": "TodoWrite", "result": "ok", "args": {
        "todos": [{"content": "a", "status": "completed"}, {"content": "b",
                                                            "status": "pending"}]}}))
    assert todo.kind == TODO
    assert todo.sections[0].items == [("completed", "a"), ("pending", "b")]
    assert (todo.sections[1].label, todo.sections[1].text) == ("output", "ok")
    other = card_of(Entry(TOOL, 4, data={"name": "mystery", "args": {"k": [1, 2]},
                                         "result": None, "is_error": True}))
    assert other.failed
    assert other.sections[0].text == '{\n  "k": [\n    1,\n    2\n  ]\n}'

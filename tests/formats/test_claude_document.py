"""A Claude Code session exported as HTML and Markdown through `sessions export --to`:
every prompt, answer, tool call and result is there, each tool as its card (a shell
command with its output, a read highlighted with its lines, a write folded, an edit as
the diff Claude Code recorded, a MultiEdit diffed, a to-do list as a checklist, searches,
web tools, a subagent linked, an unknown tool's arguments), a failed call marked, the
pasted image inside the file, a `/init` session titled `/init`."""

from __future__ import annotations

import base64
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from claude_fixtures import Transcript, project_file
from document_checks import assert_self_contained, export, parse, run_json, tool_cards, walk

from forkwise.core.formats.base import source_session_id

SID = "7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e"


def _picture(width: int = 180, height: int = 100) -> str:
    """A small PNG a person can see in a screenshot (a window with a title bar and two
    bars of text), base64: what a pasted screenshot or a Read of an image holds."""
    def pixel(x: int, y: int) -> bytes:
        if y < 16:
            return b"\x3b\x6e\xc4"  # the title bar
        if (30 <= y < 40 and 12 <= x < 150) or (52 <= y < 62 and 12 <= x < 110):
            return b"\x9a\xa4\xb0"  # lines of text
        return b"\xf4\xf6\xf8"

    rows = b"".join(b"\x00" + b"".join(pixel(x, y) for x in range(width))
                    for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    png = (b"\x89PNG\r\n\x1a\n"
           + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
    return base64.b64encode(png).decode()


PNG = _picture()
INIT = ("<command-message>init is analyzing your codebase…</command-message>\n"
        "<command-name>/init</command-name>")
ANSWER = """Here is the plan:

| step | file |
|------|------|
| one  | `app.py` |

```python
def area(r):
    return 3.14 * r * r
```

- [x] read the code
- [ ] ~~rewrite it~~ see https://example.org/docs
"""
WRITTEN = "\n".join(f"line {n}" for n in range(1, 31))


def _call(t: Transcript, name: str, args: dict[str, Any], output: Any, detail: Any = None,
          *, error: bool = False, text: str = "") -> str:
    call = f"toolu_{name}_{len(t.entries)}"
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": call, "name": name, "input": args})
    made = t.assistant(blocks, stop="tool_use")
    t.tool_result(call, output, made[-1], is_error=error, result=detail)
    return call


def session() -> Transcript:
    t = Transcript(SID)
    t.user(INIT)
    _call(t, "Bash", {"command": "ls -la src", "description": "List the sources"},
          "total 8\n  app.py\n  util.py", {"stdout": "total 8", "stderr": ""},
          text="I will look around.")
    read_body = "     1\tdef main():\n     2\t    return run()\n     3\t"
    _call(t, "Read", {"file_path": "/p/src/app.py"}, read_body,
          {"type": "text", "file": {"filePath": "/p/src/app.py", "content": read_body,
                                    "numLines": 3, "startLine": 1}})
    shot = [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": PNG}}]
    _call(t, "Read", {"file_path": "/p/shot.png"}, shot,
          {"type": "image", "file": {"base64": PNG, "type": "image/png"}})
    _call(t, "Write", {"file_path": "/p/notes.md", "content": WRITTEN}, "File created",
          {"type": "create", "filePath": "/p/notes.md", "content": WRITTEN})
    patch = [{"oldStart": 7, "oldLines": 3, "newStart": 7, "newLines": 3,
              "lines": [" def main():", "-    return run()", "+    return run(fast=True)", " "]}]
    _call(t, "Edit", {"file_path": "/p/src/app.py", "old_string": "    return run()",
                      "new_string": "    return run(fast=True)"}, "The file was updated.",
          {"filePath": "/p/src/app.py", "structuredPatch": patch})
    _call(t, "MultiEdit", {"file_path": "/p/src/util.py", "edits": [
        {"old_string": "x = 1\ny = 2", "new_string": "x = 10\ny = 2"}]}, "Applied 1 edit.")
    _call(t, "TodoWrite", {"todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
        {"content": "Write the notes", "status": "in_progress", "activeForm": "Writing"},
        {"content": "Ship it", "status": "pending", "activeForm": "Shipping"}]},
          "Todos have been modified")
    _call(t, "Grep", {"pattern": "def run", "path": "src"}, "src/app.py\nsrc/util.py")
    _call(t, "Glob", {"pattern": "**/*.toml"}, "pyproject.toml")
    _call(t, "WebFetch", {"url": "https://example.org/api", "prompt": "What changed?"},
          "The **v2** API changed.")
    _call(t, "WebSearch", {"query": "pygments lexers"}, "Results for pygments lexers")
    _call(t, "Task", {"description": "Survey tests", "prompt": "Find the slow tests",
                      "subagent_type": "general-purpose"},
          [{"type": "text", "text": "Three tests are slow."}],
          {"status": "completed", "agentId": "a1b2c3", "content": []})
    _call(t, "mcp__db__query", {"sql": "select 1", "limit": 5}, "1 row")
    _call(t, "Bash", {"command": "pytest -q"}, "2 failed, 8 passed", error=True)
    t.assistant([{"type": "text", "text": ANSWER}])
    t.user([{"type": "text", "text": "What is in this screenshot?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": PNG}}])
    t.assistant([{"type": "text", "text": "A single pixel."}])
    t.user("thanks<system-reminder>The file app.py was opened.</system-reminder>")
    t.assistant([{"type": "text", "text": "You are welcome."}])
    return t


@pytest.fixture
def imported(tmp_path: Path) -> tuple[str, str]:
    path = session().write(project_file(tmp_path / "claude", session()))
    agent = Transcript(SID, sidechain=True, agent_id="a1b2c3")
    agent.user("Find the slow tests", parent=None)
    agent.assistant([{"type": "text", "text": "Three tests are slow."}])
    side = agent.write(path.parent / "agent-a1b2c3.jsonl")
    for made in (path, side):
        os.utime(made, (1_700_000_000, 1_700_000_000))
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", "claude", str(tmp_path / "claude"),
                            "--store", store)  # fmt: skip
    assert code == 0, report
    return store, f"claude-{SID}"


def test_a_slash_command_session_is_listed_as_the_command(imported: tuple[str, str]) -> None:
    store, sid = imported
    code, rows = run_json("sessions", "list", "--store", store)
    assert code == 0
    assert [r["title"] for r in rows if r["id"] == sid] == ["/init"]


def test_the_html_export_holds_every_card(imported: tuple[str, str], tmp_path: Path) -> None:
    store, sid = imported
    html = export(store, sid, "html", tmp_path / "s.html")
    tree = parse(html)
    assert_self_contained(tree, html)
    (h1,) = [n for n in tree.nodes if n.tag == "h1"]
    assert h1.all_text() == "/init"
    users = [n for n in tree.nodes if n.tag == "div" and {"msg", "user"} <= n.classes()]
    said = [u.all_text() for u in users]
    assert "/init" in said[0]
    assert "command-message" not in html
    assert "What is in this screenshot?" in said[1]
    # the system reminder is folded away under the prompt
    assert "thanks" in said[2]
    (reminder,) = [n for n in tree.nodes if n.tag == "details"
                   and "The file app.py was opened." in n.all_text()]
    assert reminder.children[0].tag == "summary"
    cards = tool_cards(tree)
    kinds = [(sorted(c.classes() - {"tool"}), c.all_text()) for c in cards]
    assert [k for k, _ in kinds] == [["shell"], ["read"], ["read"], ["write"], ["edit"], ["edit"],
                                     ["todo"], ["search"], ["search"], ["web"], ["web"],
                                     ["task"], ["other"], ["failed", "shell"]]
    shell, read, shot, write, edit, multi, todo, grep, glob, fetch, search, task, other, failed = (
        c for c, _ in zip(cards, kinds, strict=True))
    assert "$ ls -la src" in shell.all_text()
    assert "List the sources" in shell.all_text()
    assert "  app.py" in shell.all_text()  # output keeps its leading spaces, in a <pre>
    assert any(n.tag == "pre" for n in walk(shell))
    assert "/p/src/app.py:1-3" in read.all_text()
    (code,) = [n for n in walk(read) if n.tag == "code"]
    assert code.all_text() == "def main():\n    return run()"  # numbers off, spaces kept
    assert any(n.tag == "span" and "color" in n.attrs.get("style", "") for n in walk(read))
    # 30 lines written: folded, the content inside the fold
    (fold,) = [n for n in walk(write) if n.tag == "details"]
    assert "line 30" in fold.all_text()
    rows = [n for n in walk(edit) if n.tag == "tr"]
    removed = [r for r in rows if "removed" in r.classes()]
    added = [r for r in rows if "added" in r.classes()]
    assert [r.all_text() for r in removed] == ["8-    return run()"]
    assert [r.all_text() for r in added] == ["8+    return run(fast=True)"]
    assert "background-color:#ffebe9" in removed[0].attrs["style"]
    multi_rows = [n for n in walk(multi) if n.tag == "tr"]
    assert {"removed", "added"} <= {c for r in multi_rows for c in r.classes()}
    assert "x = 10" in multi.all_text()
    items = [n.all_text() for n in walk(todo) if n.tag == "li"]
    assert items == ["☑ Read the code", "◐ Write the notes", "☐ Ship it"]
    assert "def run" in grep.all_text()
    assert "src/util.py" in grep.all_text()
    assert "**/*.toml" in glob.all_text()
    assert "pyproject.toml" in glob.all_text()
    assert "https://example.org/api" in fetch.all_text()
    assert any(n.tag == "strong" and n.all_text() == "v2" for n in walk(fetch))
    assert "pygments lexers" in search.all_text()
    assert "Survey tests" in task.all_text()
    (link,) = [n for n in walk(task) if "subagent" in n.classes()]
    assert link.all_text() == f"→ subagent session {source_session_id('claude', SID, 'a1b2c3')}"
    assert "Three tests are slow." in task.all_text()
    assert '"sql": "select 1"' in other.all_text()
    assert "failed" in failed.all_text()
    assert "2 failed, 8 passed" in failed.all_text()
    # the answer's Markdown: a table, highlighted code with its indent, a checklist, a link
    assert any(n.tag == "table" and "step" in n.all_text() for n in tree.nodes)
    pres = [n for n in tree.nodes if n.tag == "pre" and "def area" in n.all_text()]
    assert pres
    assert "    return 3.14" in pres[0].all_text()
    assert any(n.tag == "s" and n.all_text() == "rewrite it" for n in tree.nodes)
    assert any(n.tag == "a" and n.attrs["href"] == "https://example.org/docs"
               for n in tree.nodes)
    # the image a Read returned, inside its card; the pasted one after its prompt
    assert [n.attrs["src"] for n in walk(shot) if n.tag == "img"] == [
        f"data:image/png;base64,{PNG}"]
    imgs = [n for n in tree.nodes if n.tag == "img"]
    assert [n.attrs["alt"] for n in imgs] == ["Read result image", "pasted image"]
    assert imgs[1].attrs["src"] == f"data:image/png;base64,{PNG}"
    assert "A single pixel." in html
    assert "You are welcome." in html


def test_the_markdown_export(imported: tuple[str, str], tmp_path: Path) -> None:
    store, sid = imported
    text = export(store, sid, "markdown", tmp_path / "s.md")
    assert text.startswith("# /init\n")
    assert "```diff\n@@ -7,3 +7,3 @@\n def main():\n-    return run()\n+    return run(fast=True)\n" in text
    assert "```python\ndef main():\n    return run()\n" in text
    assert "- [x] Read the code\n- [ ] Write the notes (in progress)\n- [ ] Ship it\n" in text
    assert "| step | file |" in text
    assert f"![pasted image](data:image/png;base64,{PNG})" in text
    assert f"![Read result image](data:image/png;base64,{PNG})" in text
    assert "**Bash** `$ pytest -q` — **failed**" in text
    assert "**Bash** `$ ls -la src` — List the sources\n" in text
    assert "<details><summary>content (30 lines)</summary>" in text
    assert "<details><summary>System reminder</summary>" in text
    assert "<command-name>" not in text


def test_markdown_images_beside_the_file_and_no_overwrite(
        imported: tuple[str, str], tmp_path: Path) -> None:
    store, sid = imported
    out = tmp_path / "doc.md"
    text = export(store, sid, "markdown", out, "--assets")
    assert "![Read result image](doc_assets/image-1.png)" in text
    assert "![pasted image](doc_assets/image-2.png)" in text
    assert (tmp_path / "doc_assets" / "image-2.png").read_bytes()[:4] == b"\x89PNG"
    before = out.read_bytes()
    code, made = run_json("sessions", "export", sid, "--to", "html", "--out", str(out),
                          "--store", store)  # fmt: skip
    assert code == 1
    assert made["error"]["code"] == "exists"
    assert out.read_bytes() == before



def test_without_out_the_document_is_named_after_the_session_here(
        imported: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, sid = imported
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    code, made = run_json("sessions", "export", sid, "--to", "markdown", "--store", store)
    assert code == 0, made
    assert made == {"format": "markdown", "path": str(here / f"{sid}.md"), "assets": []}
    assert (here / f"{sid}.md").read_text("utf-8").startswith("# /init\n")

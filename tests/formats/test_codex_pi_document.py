"""Codex and pi sessions exported as HTML and Markdown through `sessions export --to`:
Codex's shell calls as `$ cmd` with their output, apply_patch as a per-file diff,
update_plan as a checklist, a failed call marked, the input image inside the file; pi's
bash, read, write and edit (a diff computed from its old and new text, with line numbers),
the pasted image and a tool's image; a fork of a pi session exported whole with the fork
point marked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codex_fixtures import Rollout, thread_id
from document_checks import assert_self_contained, export, parse, run_json, tool_cards, walk
from pi_fixtures import PiSession

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
       "rkJggg==")
PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    return run()
+    return run(fast=True)
*** Add File: NOTES.md
+# Notes
+  indented line
*** End Patch"""


def _codex(tmp_path: Path) -> tuple[str, str]:
    r = Rollout(thread_id(71)).meta()
    r.event("task_started", turn_id="t1", model_context_window=272000)
    r.context()
    r.item("message", role="user", content=[
        {"type": "input_text", "text": "fix the app, see the screenshot"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}])
    r.item("function_call", name="shell", call_id="c1",
           arguments=json.dumps({"command": ["bash", "-lc", "ls src"]}))
    r.item("function_call_output", call_id="c1", output=json.dumps(
        {"output": "app.py\n  util.py", "metadata": {"exit_code": 0}}))
    r.item("custom_tool_call", name="apply_patch", call_id="c2", input=PATCH)
    r.item("custom_tool_call_output", call_id="c2", output="Success. Updated the files.")
    r.item("function_call", name="update_plan", call_id="c3", arguments=json.dumps({
        "explanation": "Two **steps**", "plan": [
            {"step": "Patch the app", "status": "completed"},
            {"step": "Run the tests", "status": "in_progress"}]}))
    r.item("function_call_output", call_id="c3", output="Plan updated")
    r.item("function_call", name="exec_command", call_id="c4",
           arguments=json.dumps({"cmd": "pytest -q"}))
    r.item("function_call_output", call_id="c4", output=json.dumps(
        {"output": "1 failed", "metadata": {"exit_code": 1}}))
    r.item("web_search_call", status="completed",
           action={"type": "search", "query": "pytest fast flag"})
    r.answer("Patched; one test **still fails**.")
    r.event("task_complete", turn_id="t1", last_agent_message="done")
    path = r.write(tmp_path / "codex")
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", "codex", str(path), "--store", store)
    assert code == 0, report
    (sid,) = report["imported"]
    return store, sid


def test_a_codex_session_as_html_and_markdown(tmp_path: Path) -> None:
    store, sid = _codex(tmp_path)
    html = export(store, sid, "html", tmp_path / "c.html")
    tree = parse(html)
    assert_self_contained(tree, html)
    cards = tool_cards(tree)
    assert [sorted(c.classes() - {"tool"}) for c in cards] == [
        ["shell"], ["edit"], ["todo"], ["failed", "shell"], ["web"]]
    shell, patch, plan, failed, search = cards
    assert "web_search pytest fast flag" in search.all_text()
    assert "$ ls src" in shell.all_text()
    assert "  util.py" in shell.all_text()  # the envelope opened, the spaces kept
    rows = [n for n in walk(patch) if n.tag == "tr"]
    assert [r.all_text() for r in rows if "removed" in r.classes()] == ["-    return run()"]
    assert [r.all_text() for r in rows if "added" in r.classes()] == [
        "+    return run(fast=True)", "1+# Notes", "2+  indented line"]
    assert "src/app.py, NOTES.md" in patch.all_text()
    assert [n.all_text() for n in walk(plan) if n.tag == "li"] == [
        "☑ Patch the app", "◐ Run the tests"]
    assert "$ pytest -q" in failed.all_text()
    assert "1 failed" in failed.all_text()
    (img,) = [n for n in tree.nodes if n.tag == "img"]
    assert img.attrs["src"] == f"data:image/png;base64,{PNG}"
    assert any(n.tag == "strong" and n.all_text() == "still fails" for n in tree.nodes)
    assert "fix the app, see the screenshot" in html

    text = export(store, sid, "markdown", tmp_path / "c.md")
    assert "```diff\n@@ def main():\n-    return run()\n+    return run(fast=True)\n```" in text
    assert "```diff\n+# Notes\n+  indented line\n```" in text
    assert "- [x] Patch the app\n- [ ] Run the tests (in progress)\n" in text
    assert "**exec_command** `$ pytest -q` — **failed**" in text
    assert "`web_search pytest fast flag`" in text
    assert f"![pasted image](data:image/png;base64,{PNG})" in text


def _pi(tmp_path: Path) -> tuple[str, PiSession, dict[str, Any]]:
    s = PiSession("0193a1b2-0000-7000-8000-00000000d0c5")
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.user("tidy the code", images=(PNG,))
    s.assistant("Looking.", calls=(("p1", "bash", {"command": "ls -1"}),))
    s.tool_result("p1", "bash", "a.py\nb.py", details={"exitCode": 0})
    s.assistant(calls=(("p2", "read", {"path": "a.py", "offset": 10, "limit": 2}),))
    s.tool_result("p2", "read", "def f():\n    return 1")
    s.assistant(calls=(("p3", "write", {"path": "c.ts", "content": "const x = 1;\n"}),))
    s.tool_result("p3", "write", "Wrote c.ts")
    s.assistant(calls=(("p4", "edit", {"path": "a.py", "oldText": "    return 1",
                                       "newText": "    return 2"}),))
    s.tool_result("p4", "edit", "Edited a.py", details={
        "diff": "  9 def f():\n-10     return 1\n+10     return 2", "firstChangedLine": 10})
    s.assistant(calls=(("p6", "edit", {"path": "b.py", "oldText": "x = 1", "newText": "x = 2"}),))
    s.tool_result("p6", "edit", "Edited b.py")
    s.assistant(calls=(("p5", "screenshot", {"page": "home"}),))
    s.tool_result("p5", "screenshot", "Captured", images=(PNG,))
    s.assistant("Done: `f` returns 2.")
    path = s.write(tmp_path / "pi")
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", "pi", str(path), "--store", store)
    assert code == 0, report
    return store, s, report


def test_a_pi_session_and_its_fork_as_html(tmp_path: Path) -> None:
    store, _s, report = _pi(tmp_path)
    (sid,) = report["imported"]
    code, child = run_json("sessions", "fork", sid, "--child", "pi-fork", "--store", store)
    assert code == 0, child
    html = export(store, "pi-fork", "html", tmp_path / "p.html")
    tree = parse(html)
    assert_self_contained(tree, html)
    cards = tool_cards(tree)
    assert [sorted(c.classes() - {"tool"}) for c in cards] == [
        ["shell"], ["read"], ["write"], ["edit"], ["edit"], ["other"]]
    shell, read, write, edit, computed, other = cards
    assert "$ ls -1" in shell.all_text()
    assert "a.py:10-11" in read.all_text()
    (code_node,) = [n for n in walk(read) if n.tag == "code"]
    assert code_node.all_text() == "def f():\n    return 1"
    assert "const" in write.all_text()
    assert any(n.tag == "span" and "color" in n.attrs.get("style", "") for n in walk(write))
    # pi's own diff, numbered by the file's lines
    rows = [n for n in walk(edit) if n.tag == "tr"]
    assert [r.all_text() for r in rows] == ["99 def f():", "10-    return 1", "10+    return 2"]
    # no diff recorded: computed from the old and new text
    rows = [n for n in walk(computed) if n.tag == "tr"]
    assert [r.all_text() for r in rows if "removed" in r.classes()] == ["1-x = 1"]
    assert [r.all_text() for r in rows if "added" in r.classes()] == ["1+x = 2"]
    # the tool's image inside its card; the pasted one beside the prompt
    assert [n.attrs["src"][:22] for n in walk(other) if n.tag == "img"] == [
        "data:image/png;base64,"]
    assert len([n for n in tree.nodes if n.tag == "img"]) == 2
    # the fork's whole history, from the root, with the fork point marked
    assert "tidy the code" in html
    (mark,) = [n for n in tree.nodes if "fork-point" in n.classes()]
    assert f"Forked from {sid}" in mark.all_text()
    assert html.index("Done: ") < html.index('class="fork-point"')


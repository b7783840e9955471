"""The HTML export opens in a real rendering engine without network: Qt's rich-text engine
(QTextDocument) loads the exported file of a real-format Claude Code session, asks for no
resource outside it (every image is a data URI it decodes itself), and lays out every
prompt, answer, tool call and result; and a headless Chromium draws its code at the size
of the rest."""

from __future__ import annotations

import html as html_module
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import test_claude_document as doc_session
from claude_fixtures import project_file
from document_checks import export, run_json
from PySide6.QtCore import QSize, QUrl
from PySide6.QtGui import QImage, QPixmap, QTextDocument

pytestmark = pytest.mark.gui


class Engine(QTextDocument):
    """A document that notes every resource the engine asks for while it lays out."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[QUrl] = []

    def loadResource(self, kind: int, name: QUrl) -> Any:
        self.asked.append(QUrl(name))
        return super().loadResource(kind, name)


def test_the_html_export_lays_out_in_qts_engine_with_nothing_from_outside(
        qapp: Any, tmp_path: Path) -> None:
    t = doc_session.session()
    path = t.write(project_file(tmp_path / "claude", t))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", "claude", str(path),
                            "--store", store)
    assert code == 0, report
    html = export(store, f"claude-{doc_session.SID}", "html", tmp_path / "s.html")

    engine = Engine()
    engine.setHtml(html)
    engine.setTextWidth(900)
    assert engine.size().height() > 1000  # the whole session laid out
    # every resource it asked for is inside the file: data URIs, decoded to the picture
    assert engine.asked, "the export's images were never asked for"
    assert {url.scheme() for url in engine.asked} == {"data"}
    images = [engine.resource(QTextDocument.ResourceType.ImageResource.value, url)
              for url in engine.asked]
    for image in images:  # the fixture's 180x100 picture, decoded by the engine
        assert isinstance(image, QImage | QPixmap), image
        assert image.size() == QSize(180, 100)
    # the pasted image and the Read's result are the same picture: one resource, asked once
    sources = set(re.findall(r'<img[^>]* src="([^"]+)"', html))
    assert len(sources) == len({url.toString() for url in engine.asked}) == 1
    text = engine.toPlainText()
    for said in ("/init", "What is in this screenshot?", "I will look around.",
                 "$ ls -la src", "return run(fast=True)", "Read the code", "line 30"):
        assert said in text, said


#: writes the computed font sizes the page ends with into an element the DOM dump shows
PROBE = """<script>window.addEventListener('load', () => {
const size = s => getComputedStyle(document.querySelector(s)).fontSize;
const out = document.createElement('div');
out.id = 'probe';
out.textContent = JSON.stringify({output: size('div.tool.shell pre'), code: size('pre code')});
document.body.appendChild(out);
});</script></body>"""


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs chromium (apt-get install "
                    "chromium)")
def test_highlighted_code_in_a_browser_is_the_size_of_a_commands_output(
        tmp_path: Path) -> None:
    """A browser draws `<code>` in a `<pre>` with its own monospace quirk, 13/16 of the
    size the page asks for: highlighted code (a read, a write, a Markdown fence) came out
    at 11.7 px beside a command's output at 14.4 px and 16 px text. Drawn by a headless
    Chromium from the exported file, no network."""
    t = doc_session.session()
    path = t.write(project_file(tmp_path / "claude", t))
    store = str(tmp_path / "store")
    code, report = run_json("sessions", "import", "--from", "claude", str(path),
                            "--store", store)
    assert code == 0, report
    html = export(store, f"claude-{doc_session.SID}", "html", tmp_path / "s.html")
    page = tmp_path / "probe.html"
    page.write_text(html.replace("</body>", PROBE))
    dom = subprocess.run(
        [str(shutil.which("chromium")), "--headless", "--no-sandbox", "--disable-gpu",
         "--virtual-time-budget=2000", "--dump-dom", page.as_uri()],
        check=True, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<div id="probe">([^<]*)</div>', dom)
    assert found, dom[-500:]
    sizes = json.loads(html_module.unescape(found.group(1)))
    assert sizes["code"] == sizes["output"], sizes
    assert float(sizes["code"].removesuffix("px")) >= 13, sizes

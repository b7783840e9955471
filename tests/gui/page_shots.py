"""A session's HTML export drawn by a browser engine, beside the app's own window: the
README's picture of the two (taken by the reading test when FORKWISE_SHOTS is set). The
page is drawn by a headless Chromium (`chromium` on the PATH) from a local file, with no
network, from the anchor of a message (`#m-SEQ`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter


def chromium_shot(html: Path, anchor: str, size: tuple[int, int], out: Path,
                  settle_ms: int = 0) -> None:
    """`settle_ms`: the page's own script runs that long (virtual time) before the shot."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise RuntimeError("no chromium on the PATH for the export's picture "
                           "(apt-get install chromium)")
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={size[0]},{size[1]}", f"--screenshot={out}",
         *([f"--virtual-time-budget={settle_ms}"] if settle_ms else []),
         f"{html.as_uri()}#{anchor}"],
        check=True, capture_output=True, timeout=120)


def side_by_side(left: QImage, right: QImage, out: Path) -> None:
    """`left` and `right` in one picture, a grey gap between them."""
    gap = 16
    both = QImage(left.width() + gap + right.width(), max(left.height(), right.height()),
                  QImage.Format.Format_RGB32)
    both.fill(QColor("#d0d0d0"))
    painter = QPainter(both)
    painter.drawImage(0, 0, left)
    painter.drawImage(QRect(left.width() + gap, 0, right.width(), right.height()), right)
    painter.end()
    both.save(str(out))

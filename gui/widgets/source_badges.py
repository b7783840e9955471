"""Which agent an imported session came from, at a glance: a small lettered tile per tool
(painted, no image files), and the tool's name for tooltips and menus."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap

SIZE = 32  # painted at 2x, shown at 16 px
#: the agents whose sessions are imported and continued in (Forkwise files aside)
FOREIGN = ("claude", "codex", "pi", "gemini", "opencode")
TOOL_NAMES = {"claude": "Claude Code", "codex": "Codex", "pi": "pi", "gemini": "Gemini CLI",
              "opencode": "OpenCode", "forkwise": "Forkwise"}
#: the tools' names with an access key each, for menus listing them (Continue in ▸)
TOOL_KEYS = {"claude": "&Claude Code", "codex": "Co&dex", "pi": "&pi", "gemini": "&Gemini CLI",
             "opencode": "&OpenCode"}
_TILES = {"claude": ("C", "#c96442"), "codex": ("X", "#3a3f47"), "pi": ("π", "#5b6fd6"),
          "gemini": ("G", "#1a73e8"), "opencode": ("O", "#0f766e")}


def tool_name(tool: str | None) -> str:
    return TOOL_NAMES.get(tool or "", tool or "")


def continued_text(tool: object) -> str:
    """What a session of relation "continued" is: the file a Continue in wrote, read back
    from the agent's folder beneath the session it continues."""
    name = tool_name(tool if isinstance(tool, str) else None)
    return f"Continued in {name}" if name else "Continued in an agent"


@cache
def source_icon(tool: str) -> QIcon:
    letter, colour = _TILES.get(tool, (tool[:1].upper() or "?", "#7a8794"))
    pix = QPixmap(SIZE, SIZE)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(colour))
    p.drawRoundedRect(QRectF(3, 3, 26, 26), 6, 6)
    font = QFont()
    font.setBold(True)
    font.setPixelSize(19)
    p.setFont(font)
    p.setPen(QColor("white"))
    p.drawText(QRectF(3, 2, 26, 26), Qt.AlignmentFlag.AlignCenter, letter)
    p.end()
    pix.setDevicePixelRatio(2.0)
    return QIcon(pix)

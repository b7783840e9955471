"""Small painted icons that tell a fork from a subagent at a glance (no image files)."""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap

SIZE = 32  # painted at 2x, shown at 16 px

FORK_COLOUR = "#2f7fd1"
SUBAGENT_COLOUR = "#c7681b"
ROOT_COLOUR = "#7a8794"


@cache
def badge_icon(relation: str | None) -> QIcon:
    pix = QPixmap(SIZE, SIZE)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    if relation == "subagent":
        _subagent(p)
    elif relation is not None:
        _fork(p)
    else:
        _root(p)
    p.end()
    pix.setDevicePixelRatio(2.0)
    icon = QIcon(pix)
    # on a selected row (the palette's blue highlight) the blue badge would vanish: the
    # selected mode draws the same shape in white
    icon.addPixmap(_recoloured(pix, QColor("white")), QIcon.Mode.Selected)
    return icon


def _recoloured(pix: QPixmap, colour: QColor) -> QPixmap:
    """`pix`'s shape (its alpha) filled with `colour`."""
    out = QPixmap(pix.size())
    out.setDevicePixelRatio(pix.devicePixelRatio())
    out.fill(Qt.GlobalColor.transparent)
    p = QPainter(out)
    p.drawPixmap(0, 0, pix)
    p.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
    # (fillRect's overloads would have PySide create QGradient and its enums for it)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    p.drawRect(out.rect())
    p.end()
    return out


def _fork(p: QPainter) -> None:
    """A branch: one trunk, one line leaving it, three dots."""
    colour = QColor(FORK_COLOUR)
    p.setPen(QPen(colour, 3.2, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    p.drawLine(QPointF(10, 6), QPointF(10, 26))
    path = QPainterPath(QPointF(10, 20))
    path.cubicTo(QPointF(10, 13), QPointF(22, 15), QPointF(22, 8))
    p.drawPath(path)
    p.setBrush(colour)
    p.setPen(Qt.PenStyle.NoPen)
    for x, y in ((10, 6), (10, 26), (22, 7)):
        p.drawEllipse(QPointF(x, y), 3.6, 3.6)


def _subagent(p: QPainter) -> None:
    """A little agent: a rounded head with two eyes and an antenna."""
    colour = QColor(SUBAGENT_COLOUR)
    p.setPen(QPen(colour, 3.0))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRoundedRect(QRectF(5, 10, 22, 17), 5, 5)
    p.drawLine(QPointF(16, 10), QPointF(16, 5))
    p.setBrush(colour)
    p.setPen(Qt.PenStyle.NoPen)
    p.drawEllipse(QPointF(16, 4), 2.6, 2.6)
    p.drawEllipse(QPointF(11.5, 18.5), 2.6, 2.6)
    p.drawEllipse(QPointF(20.5, 18.5), 2.6, 2.6)


def _root(p: QPainter) -> None:
    p.setPen(QPen(QColor(ROOT_COLOUR), 3.0))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawEllipse(QPointF(16, 16), 8, 8)

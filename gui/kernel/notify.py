"""The notification bridge: how anything in the GUI tells the person something.

Messages are kept until a banner is attached (so errors raised while the window is built
are not lost) and recorded in `history` (tests read it). Nothing here is modal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QWidget

from forkwise.gui.kernel.error_text import describe, error_code
from forkwise.gui.kernel.levels import ERROR, INFO, WARNING, Level

if TYPE_CHECKING:  # made with the first notice (gui/kernel/notice)
    from forkwise.gui.kernel.notice import Notice

log = logging.getLogger(__name__)



class Notifier(QObject):
    """Signals: `posted(Notice)` for every message, once a listener is attached."""

    posted = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.history: list[Notice] = []
        self._held: list[Notice] = []
        self._attached = False

    def attach(self) -> list[Notice]:
        """A listener is connected from now on; returns (and forgets) what was held."""
        self._attached = True
        held, self._held = self._held, []
        return held

    def post(self, level: Level, text: str, code: str = "", *, action_label: str = "",
             action: Callable[[], None] | None = None) -> Notice:
        from forkwise.gui.kernel.notice import Notice

        notice = Notice(level, text, code, action_label=action_label, action=action)
        self.history.append(notice)
        (log.warning if level == ERROR else log.info)("%s: %s", level, text)
        if self._attached:
            self.posted.emit(notice)
        else:
            self._held.append(notice)
        return notice

    def info(self, text: str, *, action_label: str = "",
             action: Callable[[], None] | None = None) -> Notice:
        return self.post(INFO, text, action_label=action_label, action=action)

    def error(self, exc: BaseException, what: str = "", *, text_kept: bool = False) -> Notice:
        return self.post(ERROR, describe(exc, what, text_kept=text_kept), error_code(exc))

    def errors(self) -> list[Notice]:
        return [n for n in self.history if n.level == ERROR]


class Banner(QFrame):
    """A non-modal strip above the transcript: errors stay until closed, info fades."""

    INFO_MS = 6000

    def __init__(self, notifier: Notifier, parent: QWidget | None = None) -> None:
        # imported here: a PySide class is created (with its enums) when first imported,
        # and the window builds its banner after its first frame
        from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton

        super().__init__(parent)
        self.setObjectName("banner")
        self.setAccessibleName("Notifications")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.label = QLabel(self)
        self.label.setObjectName("bannerText")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.close_button = QToolButton(self)
        self.close_button.setObjectName("bannerClose")
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss notification")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.hide)
        self.action_button = QToolButton(self)
        self.action_button.setObjectName("bannerAction")
        self.action_button.clicked.connect(self._act)
        self.action_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.label)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.current: Notice | None = None
        #: the widget the banner floats over, at its top (`float_over`)
        self.over: QWidget | None = None
        self.hide()
        notifier.posted.connect(self.show_notice)
        for notice in notifier.attach():
            self.show_notice(notice)

    def float_over(self, widget: QWidget) -> None:
        """Float over the top of `widget` (a sibling: the transcript) instead of taking a
        place in the layout: shown or hidden, the banner moved the transcript down and
        up by its height (~35 px) each time."""
        if self.over is not None:
            self.over.removeEventFilter(self)
        self.over = widget
        widget.installEventFilter(self)
        self.place()

    def place(self) -> None:
        """Across the top of the widget it floats over, its height for that width."""
        over = self.over
        if over is None:
            return
        box = over.geometry()
        width = max(box.width() - 2 * self.INSET, 100)
        height = self.heightForWidth(width) if self.hasHeightForWidth() else -1
        height = max(height, self.sizeHint().height(), self.minimumSizeHint().height())
        self.setGeometry(box.left() + self.INSET, box.top() + self.INSET, width, height)
        self.raise_()

    #: the banner's distance from the edges of the widget it floats over
    INSET = 6

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.over and event.type() in (QEvent.Type.Move, QEvent.Type.Resize):
            self.place()
        return False

    def show_notice(self, notice: Notice) -> None:
        self.current = notice
        self.setProperty("level", notice.level)
        self.label.setText(notice.text)
        self.label.setAccessibleDescription(notice.text)
        self.setStyleSheet(_banner_style(notice.level))
        self.action_button.setVisible(notice.action is not None)
        if notice.action is not None:
            self.action_button.setText(notice.action_label or "Undo")
            self.action_button.setAccessibleName(f"{notice.action_label or 'Undo'}: {notice.text}")
        self.show()
        self.place()  # its height for this text
        if notice.level == INFO:
            self._timer.start(self.INFO_MS)
        else:
            self._timer.stop()


    def _act(self) -> None:
        """The notice's button: its action, once; the banner goes."""
        notice, self.current = self.current, None
        self.hide()
        if notice is not None and notice.action is not None:
            notice.action()


def _banner_style(level: Level) -> str:
    colours = {
        ERROR: ("#fdecea", "#8a1c12", "#e4a49c"),
        WARNING: ("#fff4e0", "#6b4500", "#e8c07a"),
        INFO: ("#e8f1fb", "#123a63", "#9fbfe3"),
    }
    bg, fg, border = colours.get(level, colours[INFO])
    return (
        f"QFrame#banner {{ background: {bg}; border: 1px solid {border}; border-radius: 4px; }}"
        f" QLabel#bannerText {{ color: {fg}; }}"
        f" QToolButton#bannerClose {{ color: {fg}; }}"
    )

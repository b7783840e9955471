"""The unread lines of the agents' files in the banner (issue 34 item 4): listed once per
change of a file — the first look's, and a later pass's when a watched file changed — with
"Ignore this file", which is remembered (a new window does not tell that file's lines
again: it is kept in the settings). Real Claude Code files in a watched folder, the host's own
watch."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import claude_fixtures as cf
import pytest
from gui_harness import open_app, until
from PySide6.QtCore import QSettings

from forkwise.gui.features.agents.source_watch import IGNORED_KEY

pytestmark = pytest.mark.gui
OTHER = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
TORN = b'{"parentUuid": "x", "type": "us\n'


def torn_file(root: Path, sid: str, exchanges: int = 2) -> tuple[cf.Transcript, Path]:
    """A Claude Code file (written long ago) with a torn line after its first exchange."""
    chat = cf.Transcript(sid)
    for n in range(exchanges):
        chat.exchange(f"question {n} of {sid[:4]}", f"answer {n}")
    path = cf.write_old(chat, root)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]) + TORN + b"".join(lines[2:]))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return chat, path


def grow(chat: cf.Transcript, path: Path, torn: bool = True) -> None:
    """Claude Code goes on: one more exchange (after another torn line, with `torn`)."""
    before = len(chat.entries)
    chat.exchange(f"question {before}", f"answer {before}")
    added = b"".join(cf.orjson.dumps(e) + b"\n" for e in chat.entries[before:])
    with open(path, "ab") as fh:
        fh.write((TORN if torn else b"") + added)
    os.utime(path, (1_700_000_100 + before, 1_700_000_100 + before))


async def whole_look(app: Any, claude: Path) -> None:
    """One more pass over the whole of the agents' folders, nothing in them changed: a new
    folder makes the kernel's follower look at the trees whole (a poll looks every
    interval anyway)."""
    passes = app.host.sources.passes
    (claude / "projects" / f"poke-{passes}").mkdir(parents=True)
    await until(lambda: app.host.sources.passes > passes, what="a whole look")


def lines_notices(app: Any) -> list[Any]:
    return [n for n in app.notifier.history if n.code == "agent-lines-unreadable"]


def test_unread_lines_are_told_once_per_change_and_an_ignored_file_no_more(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claude = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    for name in ("CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.setenv(name, str(tmp_path / "none" / name))
    chat, bad = torn_file(claude, cf.SID)

    async def scenario() -> None:
        async with open_app(tmp_path, demo=False) as app:
            first = await until(lambda: lines_notices(app), what="the first look's warning")
            (notice,) = first
            assert str(bad) in notice.text
            assert notice.action_label == "Ignore this file"
            banner = app.window.banner
            assert banner.isVisible()
            assert banner.action_button.isVisible()
            assert banner.action_button.text() == "Ignore this file"
            app.host.sources.interval = 0.1
            await whole_look(app, claude)
            assert len(lines_notices(app)) == 1  # unchanged: not told again
            # the file changes, with another torn line: told once more, that line named
            grow(chat, bad)
            second = await until(lambda: lines_notices(app)[1:], what="the change's warning")
            assert len(second) == 1
            assert str(bad) in second[0].text
            await whole_look(app, claude)
            assert len(lines_notices(app)) == 2
            # "Ignore this file": remembered; its next change is not told
            banner.action_button.click()
            assert not banner.isVisible()
            assert str(bad) in str(app.window.settings.value(IGNORED_KEY))
            grow(chat, bad)
            rows = len(app.controller.tree.session_ids())
            _other_chat, other = torn_file(claude, OTHER)
            # another file's lines still are (its change is told)
            third = await until(lambda: lines_notices(app)[2:], what="the other file's")
            assert len(third) == 1
            assert str(other) in third[0].text
            assert str(bad) not in third[0].text  # changed too, in the same pass or before
            assert len(app.controller.tree.session_ids()) > rows
            await until(lambda: f"claude-{OTHER}" in app.controller.tree.session_ids(),
                        what="the other session")
            await whole_look(app, claude)
            assert all(str(bad) not in n.text for n in lines_notices(app)[2:])
        # a new window on the same settings: the ignored file's lines are not told
        settings = QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)
        assert str(bad) in str(settings.value(IGNORED_KEY))

    aloop(scenario())

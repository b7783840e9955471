"""Errors in the window say what happened where it happened: a lost connection while
sending says the text is kept (and it is); a file error during a fork says which file and
mentions neither a connection nor any text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gui_harness import open_app, until

pytestmark = pytest.mark.gui


def test_sending_over_a_lost_connection_says_the_text_is_kept(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            await app.open(app.sid("Plan the 2.5 release"))

            async def lost(*_args: Any, **_kwargs: Any) -> Any:
                raise ConnectionResetError("the host closed the connection")

            monkeypatch.setattr(app.client, "prompt", lost)
            composer = app.window.composer
            composer.set_text("what about the changelog?")
            composer.submit()
            await until(app.notifier.errors, what="the error")
            await app.idle()
            banner = app.window.banner
            assert banner.isVisible()
            words = banner.label.text()
            assert words.startswith("Sending failed. The connection to the host was lost")
            assert words.endswith("Your text is still in the message box.")
            assert composer.text() == "what about the changelog?"  # and it is

    aloop(scenario())


def test_a_file_error_during_a_fork_names_the_file_and_no_text(
        aloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> None:
        async with open_app(tmp_path) as app:
            await app.open(app.sid("Plan the 2.5 release"))
            path = str(app.store_dir / "sessions" / "child.jsonl")

            async def refused(*_args: Any, **_kwargs: Any) -> Any:
                raise PermissionError(13, "Permission denied", path)

            monkeypatch.setattr(app.client, "fork", refused)
            app.window.action_fork.trigger()
            await until(app.notifier.errors, what="the error")
            await app.idle()
            words = app.window.banner.label.text()
            assert words == (f"Fork failed. A file could not be read or written ({path}): "
                             "permission denied.")
            assert "connection" not in words.lower()
            assert "text" not in words.lower()

    aloop(scenario())


def _codes() -> list[type[Any]]:
    from forkwise.core.errors import ForkwiseError

    found: list[type[Any]] = []
    todo = list(ForkwiseError.__subclasses__())
    while todo:
        cls = todo.pop()
        # the codes of core/errors.py (others are defined where they are raised, and are
        # subclasses here only once their module is imported: an order-dependent list)
        if cls.__module__ == "forkwise.core.errors":
            found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(found, key=lambda cls: cls.code)


@pytest.mark.parametrize("error", _codes(), ids=lambda cls: cls.code)
def test_every_error_code_of_the_core_has_a_sentence_of_the_gui(error: type[Any]) -> None:
    """Each code in core/errors.py is said in the GUI's words, not the core's message
    (invalid-session-id, invalid-event, invalid-text, approval-not-found and unauthorized
    fell through to the core's message)."""
    from forkwise.gui.kernel.error_text import describe

    said = describe(error("core-words"), "Opening")
    assert said.startswith("Opening failed. ")
    assert not said.startswith("Opening failed. core-words"), error.code
    assert len(said) > len("Opening failed. ") + 20

"""A second desktop app on a store another process writes to (issue 7): it uses that
process's host through the store socket, or opens read-only and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import FORKWISE, HERE, PYTHON, Proc, child_env, run
from .test_two_processes import LOCK_HOLDER, forkwise_json, start_host

pytest.importorskip("PySide6.QtWidgets")
pytest.importorskip("qasync")

pytestmark = pytest.mark.gui


def app_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Offscreen, and window state saved under tmp_path, not in the real home."""
    return child_env(
        QT_QPA_PLATFORM="offscreen",
        QT_LOGGING_RULES="qt.qpa.*=false",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        **extra,
    )


def test_second_app_uses_the_running_host(store: Path, tmp_path: Path) -> None:
    host, sid = start_host(store, prompts=2)
    try:
        host.send("go")
        assert host.line() == "wrote 2"
        forkwise_json("sessions", "fork", sid, "--store", str(store))
        app = run([FORKWISE, "--self-test", "--store", str(store)], app_env(tmp_path))
        assert app.returncode == 0, app.stderr
        assert "self-test ok: 2 sessions" in app.stdout
        assert "read-only" not in app.stderr.lower()
        # the host still serves (the app's connection closed cleanly)
        assert forkwise_json("sessions", "show", sid, "--store", str(store))
        code, _, err = host.finish()
        assert code == 0, err
    finally:
        host.kill()


def test_app_on_a_silent_locked_store_is_read_only_and_says_so(
    store: Path, tmp_path: Path
) -> None:
    forkwise_json("sessions", "new", "--store", str(store), "--title", "mine")
    holder = Proc([PYTHON, "-c", LOCK_HOLDER, str(store)])
    try:
        assert holder.line() == "held"
        app = run(
            [FORKWISE, "--self-test", "--store", str(store)],
            app_env(tmp_path, FORKWISE_LOCK_WAIT="0.3"),
        )
        assert app.returncode == 0, app.stderr
        assert "self-test ok: 1 sessions" in app.stdout
        assert "Read-only: another process is writing to" in app.stderr
        assert not (store / "host.sock").exists()  # a reader never serves the store
    finally:
        code, _, err = holder.finish()
        assert code == 0, err


def test_first_app_serves_its_store_to_the_cli(store: Path, tmp_path: Path) -> None:
    """The desktop app holding the lock serves `<store>/host.sock` while it runs."""
    script = HERE / "app_then_cli.py"
    done = run([PYTHON, str(script), str(store)], app_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["served", "completed", "gone"]

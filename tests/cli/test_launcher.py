"""`forkwise` itself: its help, what it says without PySide6, and FILE arguments (the
desktop entry's `Exec=forkwise %F`). Run as a real process, in whichever environment the
tests run in: the Qt-free stage (.venv-core) checks the one-line message, the Qt stage
opens the imported file."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

HAS_QT = importlib.util.find_spec("PySide6") is not None
SESSION = """\
{"type":"session","version":1,"id":"from-files-1","created":"2026-01-01T00:00:00Z","cwd":"/w","parentSession":null,"seedLength":0,"meta":{}}
{"seq":1,"type":"session/title","ts":"2026-01-01T00:00:01Z","title":"Opened from a file manager"}
"""


def forkwise(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    env.pop("FORKWISE_STORE", None)
    code = "import sys; from forkwise.gui.app.launcher import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_help_names_the_commands_and_the_environment(tmp_path: Path) -> None:
    result = forkwise("--help", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for word in ("forkwise sessions", "forkwise host", "--demo", "--self-test", "--connect",
                 "FILE", "FORKWISE_STORE", "FORKWISE_TOKEN", "FORKWISE_API_KEY"):
        assert word in text, word
    assert "PySide6" not in result.stderr


@pytest.mark.skipif(HAS_QT, reason="the Qt-free environment (.venv-core) checks this")
@pytest.mark.parametrize("args", [(), ("--demo",), ("--self-test",), ("--demo", "--self-test")])
def test_without_pyside6_one_line_says_what_to_install(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    result = forkwise(*args, tmp_path=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "pip install 'forkwise[gui]'" in lines[0]
    assert result.stdout == ""


@pytest.mark.skipif(HAS_QT, reason="the Qt-free environment (.venv-core) checks this")
def test_without_pyside6_the_cli_still_works(tmp_path: Path) -> None:
    result = forkwise("sessions", "list", "--json", "--store", str(tmp_path / "s"),
                      tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout) == []


@pytest.mark.gui
@pytest.mark.skipif(not HAS_QT, reason="needs PySide6")
def test_a_session_file_passed_is_imported_and_the_app_opens_on_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    file = tmp_path / "Downloads" / "shared.jsonl"
    file.parent.mkdir()
    file.write_text(SESSION)
    first = forkwise("--store", str(store), "--self-test", str(file), tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "from-files-1" in first.stdout
    assert "self-test ok: 1 sessions" in first.stdout
    assert (store / "sessions" / "from-files-1.jsonl").read_text() == SESSION
    # the same file opened again: nothing changes, the app opens on it
    again = forkwise(str(file), "--self-test", "--store", str(store), tmp_path=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "unchanged from-files-1" in again.stdout
    assert "self-test ok: 1 sessions" in again.stdout
    assert (store / "sessions" / "from-files-1.jsonl").read_text() == SESSION
    # with --store=DIR, a second session and a file that is no session: the import report
    # names the bad one, the good one is imported, the app opens on both sessions
    bad = tmp_path / "notes.jsonl"
    bad.write_text("not json\n")
    second = tmp_path / "Downloads" / "second.jsonl"
    second.write_text(SESSION.replace("from-files-1", "from-files-2"))
    third = forkwise(f"--store={store}", "--self-test", str(bad), str(second), tmp_path=tmp_path)
    assert third.returncode == 0, third.stderr
    assert "failed" in third.stdout
    assert "notes.jsonl" in third.stdout
    assert (store / "sessions" / "from-files-2.jsonl").is_file()
    assert "self-test ok: 2 sessions" in third.stdout

"""No test reads the person's own agents' sessions or settings: every per-user location a
reader or the app looks at by default lies inside the test's own home (before, OpenCode's
`~/.local/share/opencode` and Forkwise's `~/.config` were the machine's real ones)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from forkwise.core.host.importing import FORMATS, reader
from forkwise.core.host.source_watch import available_sources
from forkwise.core.runtime.settings import config_dir


def _inside(path: Path, home: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(home)


#: the person's own home, as the system knows it (not $HOME)
REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)


def test_every_agents_default_folder_is_in_the_tests_own_home(tmp_path: Path) -> None:
    home = Path.home()
    assert not _inside(home, REAL_HOME)
    assert not _inside(tmp_path, home)  # beside the test's folder, not in it
    env = dict(os.environ)
    roots = {tool: reader(tool).default_roots(env, home) for tool in FORMATS}
    assert set(roots) >= {"claude", "codex", "pi", "gemini", "opencode"}
    for tool, found in roots.items():
        assert found, tool
        for root in found:
            assert _inside(root, home), (tool, root)
    # and none of them exists: a watch started by a test finds no sessions of its own
    assert [s["tool"] for s in available_sources(env, home) if s["found"]] == []


def test_settings_and_data_are_in_the_tests_own_home(monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path.home()
    assert not _inside(home, REAL_HOME)
    monkeypatch.delenv("FORKWISE_CONFIG_DIR", raising=False)  # the app's default place
    assert _inside(config_dir(), home)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        assert _inside(Path(os.environ.get(var) or REAL_HOME), home), var


@pytest.mark.parametrize("run", [1, 2])
def test_each_test_has_a_home_of_its_own(run: int) -> None:
    """What one test leaves in its home is not in the next one's (the second run finds
    none of the first's)."""
    left = Path(os.path.expanduser("~")) / ".claude" / "projects" / "left-by-a-test.jsonl"
    assert not _inside(left, REAL_HOME)  # (never written there)
    assert not left.exists(), run
    left.parent.mkdir(parents=True)
    left.write_text("{}\n")

"""Shared test set-up: Qt runs offscreen, every test gets its own store directory, and the
tests of the shared store get a real PostgreSQL server (one per run)."""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")

# Nothing of the person's own per-user folders is read or written by a test: the agents'
# sessions (~/.claude, ~/.codex, ~/.pi, ~/.gemini, OpenCode's ~/.local/share/opencode),
# Forkwise's and Qt's settings (~/.config), keyrings and data (~/.local/share). Every
# test gets a home and XDG folders of its own (`_own_home`); these are the ones collection
# and session-wide fixtures see. What the installing tools keep per user stays the
# person's own, so that a tool installed once is not downloaded again: the caches
# (~/.cache, ~/.npm) and the package managers' settings (registry, certificates).
_real_home = os.path.expanduser("~")
_real_config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(_real_home, ".config")
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(_real_home, ".cache"))
os.environ.setdefault("npm_config_cache", os.path.join(_real_home, ".npm"))
for _var, _file in (("NPM_CONFIG_USERCONFIG", os.path.join(_real_home, ".npmrc")),
                    ("PIP_CONFIG_FILE", os.path.join(_real_config, "pip", "pip.conf")),
                    ("GIT_CONFIG_GLOBAL", os.path.join(_real_home, ".gitconfig"))):
    if os.path.isfile(_file):
        os.environ.setdefault(_var, _file)

#: per-user variables -> the folder each names inside a test's own home
PER_USER = {
    "HOME": "",
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    # the agents' own homes (each tool's override of its folder under ~)
    "CLAUDE_CONFIG_DIR": ".claude",
    "CODEX_HOME": ".codex",
    "PI_CODING_AGENT_DIR": ".pi/agent",
    "GEMINI_CLI_HOME": "",
}


def _point_at(home: str, setenv: Callable[[str, str], object]) -> None:
    for var, sub in PER_USER.items():
        setenv(var, os.path.join(home, sub) if sub else home)


_point_at(tempfile.mkdtemp(prefix="forkwise-test-home-"), os.environ.__setitem__)


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own for each test (empty: no agent has sessions there), beside its
    `tmp_path`; a test may point any of these elsewhere (monkeypatch) or drop one."""
    home = tmp_path_factory.mktemp("home")
    _point_at(str(home), monkeypatch.setenv)
    return home


# --- a real PostgreSQL server, for the tests of the shared store ----------------------

_schemas = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    """One PostgreSQL cluster for the whole run (see pg_server.py), stopped afterwards."""
    import pg_server as pg

    problem = pg.available()
    if problem:
        pytest.fail(problem)
    with pg.running_server() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: object) -> str:
    """The URL of an empty store of its own on the test server: a schema of its own in
    the shared test database, chosen through libpq's `options` (search_path)."""
    return pg_server.create_schema(f"t{os.getpid()}_{next(_schemas)}")  # type: ignore[attr-defined]

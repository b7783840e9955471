"""Shared test set-up: Qt runs offscreen, every test gets its own store directory, and the
tests of the shared store get a real PostgreSQL server (one per run)."""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")

# The agents' own session folders on this machine (~/.claude, ~/.codex, ~/.pi) are never
# read by a test: each points at an empty folder unless a test sets its own.
_agents = tempfile.mkdtemp(prefix="forkwise-test-agents-")
for _var, _sub in (("CLAUDE_CONFIG_DIR", "claude"), ("CODEX_HOME", "codex"),
                   ("PI_CODING_AGENT_DIR", "pi"), ("GEMINI_CLI_HOME", "gemini")):
    os.environ[_var] = os.path.join(_agents, _sub)


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

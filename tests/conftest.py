"""Shared test set-up: Qt runs offscreen, and every test gets its own store directory."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")


# --- a real PostgreSQL server, for the tests of the shared store ----------------------

import itertools
from collections.abc import Iterator

import pytest

_databases = itertools.count(1)


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
    return pg_server.create_schema(f"t{os.getpid()}_{next(_databases)}")  # type: ignore[attr-defined]

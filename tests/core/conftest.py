"""Fixtures for the core tests: one store harness per backend.

`backend_store` is parametrized over the in-memory and the JSON Lines backend, so a test
written against it is part of the one store suite both backends must pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_harness import StoreHarness


@pytest.fixture(params=["memory", "jsonl", "postgres"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreHarness]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    h = StoreHarness(request.param, tmp_path, url)
    yield h
    h.close()


@pytest.fixture
def jsonl_root(tmp_path: Path) -> Path:
    return tmp_path / "store"

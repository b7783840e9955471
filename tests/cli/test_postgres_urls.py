"""A store database's URL as the CLI shows it, and what it refuses at connect: a password
(in the user part or as `?password=`) never shows in a report or an error, a URL libpq
cannot read is a sentence (not a traceback quoting it), and a database that does not
store UTF-8 is refused at once with `database-not-utf8`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

SECRET = "s3cret-in-the-url"


def forkwise(tmp_path: Path, *argv: str, json: bool = True) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", *argv, *(["--json"] if json else [])],
        capture_output=True, text=True, timeout=60, check=False,
        env={"XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_a_password_as_a_parameter_is_not_shown(pg_server: Any, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    assert forkwise(tmp_path, "sessions", "new", "--id", "s-1", "--store", str(folder))[0] == 0
    name = "pw_param"
    pg_server.create_database(name)
    url = f"{pg_server.url(name, password=False)}?password={pg_server.password}"
    code, out, err = forkwise(tmp_path, "store", "copy", str(folder), url, json=False)
    assert code == 0, err
    assert "1 sessions copied" in out
    assert pg_server.password not in out + err


@pytest.mark.parametrize(
    "url", [f"postgresql://me:{SECRET}@[::1", f"postgresql://me:{SECRET}@[x/db"]
)
def test_a_url_libpq_cannot_read_is_a_sentence(tmp_path: Path, url: str) -> None:
    code, out, err = forkwise(tmp_path, "sessions", "list", "--store", url)
    assert code == 1, (out, err)
    assert "Traceback" not in err
    assert SECRET not in out + err
    assert orjson.loads(out)["error"]["code"] == "storage-error"


def test_a_database_that_is_not_utf8_is_refused(pg_server: Any, tmp_path: Path) -> None:
    import psycopg

    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(
            "CREATE DATABASE ascii_store ENCODING 'SQL_ASCII' TEMPLATE template0"
            " LC_COLLATE 'C' LC_CTYPE 'C'"
        )
    url = pg_server.url("ascii_store")
    code, out, err = forkwise(tmp_path, "sessions", "new", "--id", "s-1", "--store", url)
    assert code == 1, (out, err)
    found = orjson.loads(out)["error"]
    assert found["code"] == "database-not-utf8", found
    assert "SQL_ASCII" in found["message"]


def test_a_password_on_the_command_line_is_warned_about(pg_server: Any, tmp_path: Path) -> None:
    """Every user reads a command line (ps): the CLI says so, and names where the password
    goes instead; from the environment it says nothing."""
    name = "pw_argv"
    pg_server.create_database(name)
    with_password = pg_server.url(name)
    code, out, err = forkwise(tmp_path, "sessions", "list", "--store", with_password)
    assert code == 0, err
    assert "holds a password, which every user of this machine can read" in err
    assert "$PGPASSWORD" in err
    assert pg_server.password not in out + err
    done = subprocess.run(
        [sys.executable, "-m", "forkwise.core.cli", "sessions", "list", "--json",
         "--store", pg_server.url(name, password=False)],
        capture_output=True, text=True, timeout=60, check=False,
        env={"XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin", "HOME": str(tmp_path),
             "PGPASSWORD": pg_server.password},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""

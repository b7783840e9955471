"""A real PostgreSQL server for tests: Debian's `initdb` and `pg_ctl` in a temporary folder,
under an unprivileged user (initdb refuses root), listening on 127.0.0.1 on a free port and on
a socket in that folder. One per test session; each test gets a database of its own."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: the role tests connect as (host connections need its password: scram-sha-256)
ROLE = "forkwise"


def _bin_dir() -> Path | None:
    """Where initdb and pg_ctl are: PATH, else Debian's versioned folder."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
    return Path(versions[-1]).parent if versions else None


def _version_key(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One running cluster; `url(db)` is a libpq URL with the password in it."""

    def __init__(self, folder: Path, port: int, password: str, run_as: str | None) -> None:
        self.folder = folder
        self.port = port
        self.password = password
        self._run_as = run_as
        self._bin = _bin_dir()

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, db: str = "postgres", *, password: bool = True) -> str:
        secret = f":{self.password}" if password else ""
        return f"postgresql://{ROLE}{secret}@127.0.0.1:{self.port}/{db}"

    def _cmd(self, *args: str) -> list[str]:
        assert self._bin is not None
        cmd = [str(self._bin / args[0]), *args[1:]]
        if not self._run_as:
            return cmd
        runuser = shutil.which("runuser") or "/usr/sbin/runuser"  # util-linux; sbin may be off PATH
        return [runuser, "-u", self._run_as, "--", *cmd]

    def start(self) -> None:
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password + "\n")
        self._own(self.folder, pwfile)
        subprocess.run(
            self._cmd(
                "initdb", "-D", str(self.data), "-U", ROLE, "--pwfile", str(pwfile),
                "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                "--locale=C", "--no-sync",
            ),
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        pwfile.unlink()
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.folder} -c fsync=off "
            "-c full_page_writes=off -c max_connections=100"
        )
        subprocess.run(
            self._cmd("pg_ctl", "-D", str(self.data), "-o", options, "-w", "-t", "60",
                      "-l", str(self.folder / "server.log"), "start"),
            check=True, capture_output=True, timeout=90,
        )  # fmt: skip

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(
                self._cmd("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"),
                check=False, capture_output=True, timeout=60,
            )  # fmt: skip

    def _own(self, *paths: Path) -> None:
        if self._run_as:
            entry = pwd.getpwnam(self._run_as)
            for p in paths:
                os.chown(p, entry.pw_uid, entry.pw_gid)

    def create_database(self, name: str) -> str:
        """A fresh database (an empty store); its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def create_schema(self, name: str, db: str = "postgres") -> str:
        """A fresh schema (an empty store, faster to make than a database); the URL that
        puts it first on the search path."""
        import psycopg

        with psycopg.connect(self.url(db), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return f"{self.url(db)}?options=-csearch_path%3D{name}"


def available() -> str | None:
    """Why no server can be started here, or None."""
    if _bin_dir() is None:
        return "PostgreSQL's initdb/pg_ctl are not installed (packaging/dev.sh installs them)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (the 'postgres' extra)"
    return None


@contextlib.contextmanager
def running_server() -> Iterator[PgServer]:
    run_as = None
    if os.geteuid() == 0:
        run_as = "postgres"
        pwd.getpwnam(run_as)  # KeyError: Debian's package creates this user
    folder = Path(tempfile.mkdtemp(prefix="forkwise-pg-"))
    server = PgServer(folder, _free_port(), secrets.token_hex(12), run_as)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)

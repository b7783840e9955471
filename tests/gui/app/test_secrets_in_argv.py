"""The desktop app takes its secrets where other users cannot read them: a host's token
from $FORKWISE_TOKEN, a file or standard input, a database password from the environment
(never from the command line, which every user reads in `ps` and /proc/PID/cmdline), and
never shows a password in its window title. Real `forkwise` processes, a real host over
TCP on 127.0.0.1 and a real PostgreSQL server."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest
from host_process import tcp_host

from tests.reliability.conftest import FORKWISE, child_env

pytestmark = pytest.mark.gui

TOKEN = "gui-token-5f1e9a7c3b"
TIMEOUT = 120


def app_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return child_env(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "cfg"),
                     XDG_DATA_HOME=str(tmp_path / "data"), **extra)  # fmt: skip


def self_test(argv: list[str], env: dict[str, str], stdin: str | None = None
              ) -> tuple[bytes, subprocess.CompletedProcess[str]]:
    """The app's command line as /proc shows it to everyone while it runs, and its run."""
    proc = subprocess.Popen([FORKWISE, *argv, "--self-test"], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()  # fixed once exec returned
    out, err = proc.communicate(stdin, timeout=TIMEOUT)
    return cmdline, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture
def host(tmp_path: Path):  # type: ignore[no-untyped-def]
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    with tcp_host(tmp_path / "store", token, env=child_env()) as (_, address):
        yield address


def test_the_token_from_a_file_stdin_or_the_environment_is_not_in_cmdline(
    tmp_path: Path, host: str
) -> None:
    mine = tmp_path / "mine"
    mine.write_text(TOKEN + "\n")
    mine.chmod(0o600)
    for argv, env, stdin in (
        (["--connect", host, "--token-file", str(mine)], app_env(tmp_path), None),
        (["--connect", host, "--token-file", "-"], app_env(tmp_path), TOKEN + "\n"),
        (["--connect", host], app_env(tmp_path, FORKWISE_TOKEN=TOKEN), None),
    ):
        cmdline, done = self_test(argv, env, stdin)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        assert "self-test ok" in done.stdout
        assert TOKEN.encode() not in cmdline
        assert TOKEN not in done.stdout + done.stderr


def test_a_token_on_the_command_line_is_refused_with_a_sentence(
    tmp_path: Path, host: str
) -> None:
    _, done = self_test(["--connect", host, "--token", TOKEN], app_env(tmp_path))
    assert done.returncode == 2
    assert "--token on the command line can be read by every user" in done.stderr
    assert "$FORKWISE_TOKEN" in done.stderr
    assert "--token-file" in done.stderr
    assert "self-test ok" not in done.stdout
    assert TOKEN not in done.stderr


def test_a_database_password_stays_out_of_cmdline_and_the_title(
    tmp_path: Path, pg_url: str, pg_server: object
) -> None:
    password: str = pg_server.password  # type: ignore[attr-defined]
    assert f":{password}@" in pg_url
    bare = pg_url.replace(f":{password}@", "@")
    # the password in the URL on the command line: refused before anything connects
    cmdline, done = self_test(["--store", pg_url], app_env(tmp_path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "holds a password" in done.stderr
    assert "$PGPASSWORD" in done.stderr
    assert password not in done.stderr
    # with files to import first: refused before the import (it would pass the URL on)
    stray = tmp_path / "stray.jsonl"
    stray.write_text("{}\n")
    _, done = self_test(["--store", pg_url, str(stray)], app_env(tmp_path))
    assert done.returncode == 2
    assert "holds a password" in done.stderr
    assert done.stdout == ""
    # as a parameter, percent-encoded: the same
    hidden = f"{bare}{'&' if '?' in bare else '?'}%70assword={quote(password)}"
    _, done = self_test(["--store", hidden], app_env(tmp_path))
    assert done.returncode == 2
    assert password not in done.stderr
    # from the environment: it opens, and neither /proc nor the title shows it
    for argv, env in (
        (["--store", bare], app_env(tmp_path, PGPASSWORD=password)),
        ([], app_env(tmp_path, FORKWISE_STORE=pg_url)),
        ([], app_env(tmp_path, FORKWISE_STORE=hidden)),
    ):
        cmdline, done = self_test(argv, env)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        assert "self-test ok" in done.stdout
        assert "title 'Forkwise — postgresql://" in done.stdout
        assert password.encode() not in cmdline
        assert password not in done.stdout + done.stderr  # the title among them

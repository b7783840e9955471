"""What ships beside the program without a build: the manual page, the licence, the desktop
integration files. Fast (no bundle): each check runs the tool a distribution would run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAN = ROOT / "packaging" / "forkwise.1"


def rendered_man() -> str:
    if shutil.which("man") is None:
        pytest.skip("needs man (man-db)")
    proc = subprocess.run(
        ["man", "--warnings", "-E", "UTF-8", "-l", str(MAN)],
        env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr  # groff warnings
    return proc.stdout


@pytest.mark.parametrize(
    "needle",
    [
        "forkwise host",
        "--listen",
        "--token-file",
        "--allow-remote",
        "FORKWISE_API_KEY",
        "FORKWISE_TOKEN",
        "FORKWISE_STORE",
        "FORKWISE_CONFIG_DIR",
        "~/.config/forkwise/settings.json",
        "~/.config/Forkwise/forkwise.conf",
        "~/.local/share/forkwise/store/",
        "forkwise[gui]",
        "FILE",
    ],
)
def test_manual_page_covers(needle: str) -> None:
    text = rendered_man().replace("\u2010\n", "").replace("\u2010", "-")
    assert needle in " ".join(text.split()).replace("- ", "-"), needle


def test_licence_is_mit_for_the_forkwise_authors() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 The Forkwise authors" in text

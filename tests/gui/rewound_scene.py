"""A Claude Code session rewound twice: two left-behind branches of one question."""

from __future__ import annotations

from pathlib import Path

import claude_fixtures as cf

SID = "3a9c0d1e-2222-4b6a-9e7d-0a1b2c3d4e5f"
QUESTION = "Why does the release build fail on macOS?"


def claude_rewound_twice(root: Path) -> Path:
    """Asked, rewound twice to after the first answer (three ways on from one point),
    then renamed: Claude Code writes the custom title after the last branch's entries."""
    t = cf.Transcript(SID, cwd="/home/ada/work/app")
    t.exchange(QUESTION, "Let me read the build log.")
    fork_at = t.last
    t.exchange("check the signing step", "The certificate expired.")
    t.last = fork_at
    t.exchange("check the SDK version", "The SDK is too old.")
    t.last = fork_at
    t.exchange("check the linker flags", "A flag is missing.")
    t.custom_title("Release build on macOS")
    return cf.write_old(t, root)

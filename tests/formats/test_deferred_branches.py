"""A reader that defers its branches (`DefersBranches`) gives, once each is built, exactly
what its `read` gives: an import builds a file's branches one at a time instead of all at
once (1,500 rewinds of a Claude Code file held 4 GB of branches; pi's the same)."""

from __future__ import annotations

from pathlib import Path

from pi_fixtures import PiSession

from forkwise.core.bench.synth_sources import claude_rewound
from forkwise.core.formats.base import DefersBranches, ImportedSession
from forkwise.core.formats.claude import READER as CLAUDE
from forkwise.core.formats.pi import READER as PI

BRANCHES = 20


def pi_rewound(folder: Path) -> Path:
    s = PiSession("0193a1b2-0000-7000-8000-0000000000aa")
    last = None
    for t in range(1, BRANCHES + 2):
        if t > 1:  # asked under the answer before, then left
            s.branch(last)
            s.user(f"retry {t}")
            s.assistant(f"answer to retry {t}")
            s.branch(last)
        s.user(f"step {t}")
        last = s.assistant(f"answer {t}")
    return s.write(folder / "sessions" / "--home-ada-project--")


def built(sessions: list[ImportedSession]) -> list[ImportedSession]:
    waiting = [s for s in sessions if s.later is not None]
    assert len(waiting) == BRANCHES  # every branch, not the main line
    assert all(s.events == [] for s in waiting)
    return [s.built() for s in sessions]


def test_deferred_claude_branches_are_what_read_gives(tmp_path: Path) -> None:
    path = claude_rewound(tmp_path, BRANCHES)
    assert isinstance(CLAUDE, DefersBranches)
    assert built(CLAUDE.read_deferred(path)) == CLAUDE.read(path)


def test_deferred_pi_branches_are_what_read_gives(tmp_path: Path) -> None:
    path = pi_rewound(tmp_path)
    assert isinstance(PI, DefersBranches)
    assert built(PI.read_deferred(path)) == PI.read(path)

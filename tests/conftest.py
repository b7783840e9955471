"""Shared test set-up: Qt runs offscreen, and every test gets its own store directory."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")

# The agents' own session folders on this machine (~/.claude, ~/.codex, ~/.pi) are never
# read by a test: each points at an empty folder unless a test sets its own.
_agents = tempfile.mkdtemp(prefix="forkwise-test-agents-")
for _var, _sub in (("CLAUDE_CONFIG_DIR", "claude"), ("CODEX_HOME", "codex"),
                   ("PI_CODING_AGENT_DIR", "pi")):
    os.environ[_var] = os.path.join(_agents, _sub)

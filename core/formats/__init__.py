"""Foreign session formats: Claude Code, Codex and pi, read and written."""

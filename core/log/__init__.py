"""The session log: events, the event log, ids, turn rules and replay (pure, no I/O)."""

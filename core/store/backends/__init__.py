"""Persistence backends for SessionStore: in memory, and one JSON Lines file per session."""

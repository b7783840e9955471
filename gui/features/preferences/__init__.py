"""Preferences: which model answers new turns."""

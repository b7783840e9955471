"""Branches: rename, step between sibling forks, compare two branches."""

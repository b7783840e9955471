"""The `keyring` package's API over a dict, installed as the `keyring` module: the OS's
secret service cannot run here, and a test must never reach a developer's own."""

from __future__ import annotations

import sys
import types

import pytest


class MemoryKeyring(types.ModuleType):
    def __init__(self) -> None:
        super().__init__("keyring")
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, account: str) -> str | None:
        return self.entries.get((service, account))

    def set_password(self, service: str, account: str, secret: str) -> None:
        self.entries[(service, account)] = secret

    def delete_password(self, service: str, account: str) -> None:
        del self.entries[(service, account)]


def install(monkeypatch: pytest.MonkeyPatch) -> MemoryKeyring:
    fake = MemoryKeyring()
    monkeypatch.setitem(sys.modules, "keyring", fake)
    return fake

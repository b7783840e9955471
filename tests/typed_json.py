"""Equality of decoded JSON that also compares types: `1 == 1.0 == True` and a str
subclass equals its text, but a reader of a line gets exactly dict, list, str, int, float,
bool or None, and an event built for writing must hold the same."""

from __future__ import annotations

from typing import Any


def same_json(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(
            type(k) is str and same_json(a[k], b[k]) for k in a
        )
    if type(a) is list:
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)

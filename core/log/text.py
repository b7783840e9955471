"""Text the logs and the wire can carry: valid UTF-8, nothing else.

Python hands out paths (`os.getcwd()`, `sys.argv`) that hold bytes which are not UTF-8 as
strings with lone surrogates (surrogate escapes). JSON cannot hold those, so Forkwise
refuses them with `invalid-text`, naming the field and showing the value escaped, instead
of storing a changed path or failing with a traceback. Decided in issue 18 (item 6).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forkwise.core.errors import InvalidText


def is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(value: str, field: str) -> str:
    """`value`, or InvalidText naming `field` when it is not valid UTF-8."""
    if not is_utf8(value):
        raise InvalidText(
            f"{field} {shown(value)} is not valid UTF-8 text; Forkwise stores only UTF-8"
            " (rename the folder or file, or pass a path without such bytes)",
            field=field,
        )
    return value


def shown(value: str) -> str:
    """The value with its undecodable bytes as \\xNN escapes, printable anywhere."""
    raw = value.encode("utf-8", "surrogateescape")
    return "'" + raw.decode("utf-8", "backslashreplace") + "'"


def find_invalid(value: Any, field: str = "") -> tuple[str, str] | None:
    """The first (field, string) in a JSON-like value that is not valid UTF-8."""
    if isinstance(value, str):
        return None if is_utf8(value) else (field or "a value", value)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not is_utf8(key):
                return (f"{field}.{shown(key)}" if field else shown(key), key)
            found = find_invalid(item, f"{field}.{key}" if field else str(key))
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for n, item in enumerate(value):
            found = find_invalid(item, f"{field}[{n}]")
            if found is not None:
                return found
    return None

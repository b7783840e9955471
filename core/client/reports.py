"""Reports as the client hands them out, one typed definition for every front end: a
session's usage (`usage`, and `usage.own` of the rows `list_sessions(usage=True)` lists)
and what an import did (`import_files`, and the files and lines the first look of
`watch_sources` could not read).

The host builds a usage part with `core.log.costs.part` and an import report with
`core.host.importing.ImportReport`; `usage_part`, `usage_report`, `import_report` and
`import_problems` make complete typed values of what arrived (a key missing takes its
default: 0 tokens, no cost, nothing imported), so a front end reads fields, never
`.get("…")` with a fallback of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict


class UsagePart(TypedDict):
    """Tokens and their cost; reasoning is counted inside output."""

    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    reasoning: int
    #: USD, None when no token of the part has a price
    cost: float | None


class RowUsage(TypedDict):
    """A listed row's `usage`: the session's own part (what came after its seed)."""

    own: UsagePart


class UsageReport(TypedDict):
    """`usage(session)`: its own part, the part it shares with its source, their total,
    and the total by model."""

    own: UsagePart
    shared: UsagePart
    total: UsagePart
    byModel: dict[str, UsagePart]


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_part(data: object) -> UsagePart:
    """`data` (a part as the host sends it, or None) as a complete part."""
    got: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    cost = got.get("cost")
    return UsagePart(
        input=_count(got.get("input")), output=_count(got.get("output")),
        cacheRead=_count(got.get("cacheRead")), cacheWrite=_count(got.get("cacheWrite")),
        reasoning=_count(got.get("reasoning")),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )  # fmt: skip


def row_usage(data: object) -> RowUsage | None:
    """A row's `usage` as sent ({"own": …}), or None when the row carries none."""
    if not isinstance(data, Mapping) or not isinstance(data.get("own"), Mapping):
        return None
    return RowUsage(own=usage_part(data["own"]))


def usage_report(data: Mapping[str, Any]) -> UsageReport:
    """`usage`'s answer as sent, complete."""
    models = data.get("byModel")
    return UsageReport(
        own=usage_part(data.get("own")), shared=usage_part(data.get("shared")),
        total=usage_part(data.get("total")),
        byModel={str(m): usage_part(p) for m, p in models.items()}
        if isinstance(models, Mapping) else {},
    )  # fmt: skip


class ErrorInfo(TypedDict):
    """A `ForkwiseError` as it crossed: its stable code and its words."""

    code: str
    message: str


class FailedFile(TypedDict):
    """A file that could not be imported (its sessions are not in the store)."""

    path: str
    #: the line that stopped it, if one did
    line: int | None
    error: ErrorInfo


class KeptLine(TypedDict):
    """A line of a file read that was kept unread (the session is imported without it)."""

    path: str
    line: int
    code: str
    message: str


class ImportProblems(TypedDict):
    failed: list[FailedFile]
    warnings: list[KeptLine]


class ImportReport(ImportProblems):
    """`import_files`: the sessions imported, brought up to date or already the same,
    and the events made for what has no Forkwise equivalent, by kind."""

    imported: list[str]
    updated: list[str]
    unchanged: list[str]
    unmapped: dict[str, int]


def _failed_file(data: Mapping[str, Any]) -> FailedFile:
    error = data.get("error")
    said: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    line = data.get("line")
    return FailedFile(path=str(data.get("path", "")), line=line if isinstance(line, int) else None,
                      error=ErrorInfo(code=str(said.get("code", "")),
                                      message=str(said.get("message", ""))))


def _kept_line(data: Mapping[str, Any]) -> KeptLine:
    return KeptLine(path=str(data.get("path", "")), line=_count(data.get("line")),
                    code=str(data.get("code", "")), message=str(data.get("message", "")))


def _maps(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def import_problems(data: Mapping[str, Any]) -> ImportProblems:
    """The `failed` and `warnings` of an import or of a watch's first look."""
    return ImportProblems(failed=[_failed_file(f) for f in _maps(data.get("failed"))],
                          warnings=[_kept_line(w) for w in _maps(data.get("warnings"))])


def import_report(data: Mapping[str, Any]) -> ImportReport:
    """`import_files`' answer as sent, complete."""
    problems = import_problems(data)
    unmapped = data.get("unmapped")

    def ids(key: str) -> list[str]:
        value = data.get(key)
        return [str(v) for v in value] if isinstance(value, list) else []

    return ImportReport(
        imported=ids("imported"), updated=ids("updated"), unchanged=ids("unchanged"),
        failed=problems["failed"], warnings=problems["warnings"],
        unmapped={str(k): _count(n) for k, n in unmapped.items()}
        if isinstance(unmapped, Mapping) else {},
    )  # fmt: skip

"""From per-case results to the category x backend scores, the table and the JSON.

A category's score is the share of its checks that passed (not of its cases), so a case
with ten checks weighs ten times one with a single check, as issue 7 specifies; the
overall row is the share over all of a backend's checks.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from evals.schema import CATEGORIES

OVERALL = "overall"


class CaseResult(BaseModel):
    id: str
    backend: str
    category: str
    passed: int = Field(description="checks passed")
    checks: int = Field(description="checks run")
    failures: list[str] = Field(default_factory=list)


Tally = dict[str, dict[str, tuple[int, int]]]
"""backend -> category (or "overall") -> (passed, checks)."""


def tally(results: list[CaseResult]) -> Tally:
    counts: Tally = {}
    for result in results:
        per_backend = counts.setdefault(result.backend, {})
        for key in (result.category, OVERALL):
            passed, checks = per_backend.get(key, (0, 0))
            per_backend[key] = (passed + result.passed, checks + result.checks)
    return counts


def scores(results: list[CaseResult]) -> dict[str, dict[str, float]]:
    """{backend: {category: score, "overall": score}}; categories without checks are left out."""
    return {
        backend: {key: round(passed / checks, 4) for key, (passed, checks) in per.items() if checks}
        for backend, per in tally(results).items()
    }


def report(results: list[CaseResult]) -> dict:
    return {"scores": scores(results), "cases": [result.model_dump() for result in results]}


def write_json(results: list[CaseResult], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report(results), indent=2), encoding="utf-8")


def table(results: list[CaseResult]) -> str:
    """A plain-text category x backend table; a cell reads `score (passed/checks)`."""
    counts = tally(results)
    backends = list(counts)
    rows = [category for category in CATEGORIES if any(category in counts[b] for b in backends)] + [OVERALL]
    header = ["category", *backends]
    body = [[row, *(_cell(counts[backend].get(row)) for backend in backends)] for row in rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = [_line(header, widths), _line(["-" * width for width in widths], widths)]
    lines += [_line(line, widths) for line in body]
    return "\n".join(lines)


def _cell(counts: tuple[int, int] | None) -> str:
    if counts is None or counts[1] == 0:
        return "-"
    passed, checks = counts
    return f"{passed / checks:.2f} ({passed}/{checks})"


def _line(cells: list[str], widths: list[int]) -> str:
    return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"

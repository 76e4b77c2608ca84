"""One figure of the benchmark command: a value, its target, and a baseline from the same run.

Every benchmark module returns a list of `Figure`s; `python -m benchmarks` prints them as
one table and writes them as JSON. A ratio is always against a baseline measured in the
same run on the same machine (2 shared cores: absolute numbers move with the load, ratios
much less), never against a number typed in from an earlier run.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    target: str = "-"
    """What the issue asks (e.g. "<= 20"), or "-" when the figure is informative only."""
    meets: bool | None = None
    baseline: str = "-"
    """What the ratio is taken against, measured in the same run."""
    baseline_value: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.baseline_value in (None, 0):
            return None
        return self.value / self.baseline_value


def check(value: float, op: str, limit: float) -> tuple[str, bool]:
    """(target text, met?) for `value op limit` with op one of <=, >=, ==."""
    met = {"<=": value <= limit, ">=": value >= limit, "==": value == limit}[op]
    return f"{op} {limit:g}", bool(met)


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples, dtype=float), q)) if samples else float("nan")


def load_average() -> list[float]:
    try:
        return [float(part) for part in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return list(os.getloadavg())


def _number(value: float) -> str:
    if value != value:  # NaN
        return "n/a"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def table(figures: list[Figure]) -> str:
    lines = ["| figure | value | unit | target | meets | baseline (same run) | ratio |", "|---|---:|---|---|---|---|---:|"]
    for f in figures:
        meets = "-" if f.meets is None else ("yes" if f.meets else "NO")
        baseline = f.baseline if f.baseline_value is None else f"{f.baseline}: {_number(f.baseline_value)}"
        ratio = "-" if f.ratio is None else f"{f.ratio:.2f}x"
        lines.append(f"| {f.name} | {_number(f.value)} | {f.unit} | {f.target} | {meets} | {baseline} | {ratio} |")
    return "\n".join(lines)


def as_json(figures: list[Figure], load: list[float]) -> dict:
    return {
        "figures": [{"name": f.name, "value": f.value, "unit": f.unit, "target": f.target, "meets": f.meets,
                     "baseline": f.baseline, "baseline_value": f.baseline_value, "ratio": f.ratio} for f in figures],
        "load_average": load,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_json(path: Path, figures: list[Figure], load: list[float]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(as_json(figures, load), indent=2) + "\n")


"""Running the eval suite from the lab, and its two charts.

The suite runs as `python -m evals.run` in a child process (its own runtime, users and
progress lines on stderr) so a long run never blocks or pollutes the lab's process; the
page streams the progress lines and reads the JSON report the run writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from settings import REPO_ROOT

Progress = Callable[[str], None]


class EvalRunFailed(RuntimeError):
    """The eval process exited with an error (its last lines say why)."""


def eval_command(backends: list[str], min_similarity: float | None, json_path: Path,
                 cases: list[Path] | None = None) -> list[str]:
    command = [sys.executable, "-m", "evals.run", "--json", str(json_path)]
    if cases:
        command += ["--cases", *map(str, cases)]
    if backends:
        command += ["--backend", *backends]
    if min_similarity is not None:
        command += ["--min-similarity", f"{min_similarity:.2f}"]
    return command


def run_eval(backends: list[str], min_similarity: float | None = None, progress: Progress = print,
             cases: list[Path] | None = None) -> dict[str, Any]:
    """Run the suite once; returns its report ({"scores": {backend: {category: score}}, "cases": [...]})."""
    with tempfile.TemporaryDirectory(prefix="lab-eval-") as folder:
        json_path = Path(folder) / "report.json"
        process = subprocess.Popen(
            eval_command(backends, min_similarity, json_path, cases), cwd=REPO_ROOT, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        tail: list[str] = []
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip()
            if line:
                tail = (tail + [line])[-5:]
                progress(line)
        if process.wait() != 0 or not json_path.exists():
            raise EvalRunFailed(f"the eval run failed (exit {process.returncode}): " + " / ".join(tail))
        return json.loads(json_path.read_text(encoding="utf-8"))


def case_files(folder: Path) -> list[Path]:
    """The suite's case files (one per category), for running a subset."""
    return sorted(folder.glob("*.yaml"))


def scores_figure(scores: dict[str, dict[str, float]]) -> go.Figure:
    """Score per category, one bar per backend."""
    figure = go.Figure()
    for backend, per_category in scores.items():
        categories = list(per_category)
        figure.add_trace(go.Bar(name=backend, x=categories, y=[per_category[c] for c in categories]))
    figure.update_layout(barmode="group", yaxis={"range": [0, 1], "title": "score (share of checks passed)"},
                         height=420, margin={"l": 40, "r": 20, "t": 30, "b": 40})
    return figure


def sweep_figure(points: dict[float, dict[str, dict[str, float]]], category: str = "overall") -> go.Figure:
    """A category's score against MIN_SIMILARITY, one line per backend."""
    thresholds = sorted(points)
    backends = sorted({backend for scores in points.values() for backend in scores})
    figure = go.Figure()
    for backend in backends:
        figure.add_trace(go.Scatter(
            name=backend, mode="lines+markers", x=thresholds,
            y=[points[t].get(backend, {}).get(category) for t in thresholds],
        ))
    figure.update_layout(xaxis={"title": "MIN_SIMILARITY"}, yaxis={"range": [0, 1], "title": f"{category} score"},
                         height=420, margin={"l": 40, "r": 20, "t": 30, "b": 40})
    return figure

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


def _run(command: list[str], progress: Progress) -> None:
    """Run a child process, streaming its output lines to `progress`; raise with its last lines."""
    process = subprocess.Popen(command, cwd=REPO_ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    tail: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        line = line.rstrip()
        if line:
            tail = (tail + [line])[-5:]
            progress(line)
    if process.wait() != 0:
        raise EvalRunFailed(f"the eval run failed (exit {process.returncode}): " + " / ".join(tail))


def run_eval(backends: list[str], min_similarity: float | None = None, progress: Progress = print,
             cases: list[Path] | None = None) -> dict[str, Any]:
    """Run the suite once; returns its report ({"scores": {backend: {category: score}}, "cases": [...]})."""
    with tempfile.TemporaryDirectory(prefix="lab-eval-") as folder:
        json_path = Path(folder) / "report.json"
        _run(eval_command(backends, min_similarity, json_path, cases), progress)
        if not json_path.exists():
            raise EvalRunFailed("the eval run wrote no report")
        return json.loads(json_path.read_text(encoding="utf-8"))


def run_sweep(backends: list[str], values: list[float], progress: Progress = print,
              cases: list[Path] | None = None) -> dict[float, dict[str, dict[str, float]]]:
    """threshold -> backend -> category -> score, from `python -m evals.sweep` (one process for
    every threshold)."""
    with tempfile.TemporaryDirectory(prefix="lab-sweep-") as folder:
        command = [sys.executable, "-m", "evals.sweep", "--out", folder, "--values", *map(str, values)]
        command += ["--backend", *backends] + (["--cases", *map(str, cases)] if cases else [])
        _run(command, progress)
        points = json.loads((Path(folder) / "sweep.json").read_text(encoding="utf-8"))
    return {float(value): scores for value, scores in points.items()}


def case_files(folder: Path) -> list[Path]:
    """The suite's case files (one per category), for running a subset."""
    return sorted(folder.glob("*.yaml"))


def scores_figure(scores: dict[str, dict[str, float]]) -> go.Figure:
    """Score per category, one bar per backend."""
    figure = go.Figure()
    for backend, per_category in scores.items():
        categories = list(per_category)
        values = [per_category[c] for c in categories]
        figure.add_trace(go.Bar(name=backend, x=categories, y=values, text=[f"{v:.2f}" for v in values],
                                textposition="outside"))
    figure.update_layout(barmode="group", showlegend=True, yaxis={"range": [0, 1.1], "title": "score (share of checks passed)"},
                         height=420, margin={"l": 40, "r": 20, "t": 30, "b": 40})
    return figure


def sweep_figure(points: dict[float, dict[str, dict[str, float]]]) -> go.Figure:
    """Each category's score against MIN_SIMILARITY, one line per backend and category."""
    thresholds = sorted(points)
    series = sorted({(backend, category) for scores in points.values() for backend, per in scores.items() for category in per})
    dashes = {category: dash for category, dash in zip(sorted({c for _, c in series}), ("solid", "dot", "dash", "dashdot"))}
    figure = go.Figure()
    for backend, category in series:
        figure.add_trace(go.Scatter(
            name=f"{backend}: {category}", mode="lines+markers", x=thresholds, line={"dash": dashes.get(category, "solid")},
            y=[points[t].get(backend, {}).get(category) for t in thresholds],
        ))
    figure.update_layout(xaxis={"title": "MIN_SIMILARITY"}, yaxis={"range": [0, 1.05], "title": "score"},
                         height=420, margin={"l": 40, "r": 20, "t": 30, "b": 40})
    return figure

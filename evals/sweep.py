"""`python -m evals.sweep`: over-retrieval, answer-use and recall F1 / empty_ok across MIN_SIMILARITY.

Cosine scores of unrelated and related sentences overlap (DESIGN.md: "hello" vs a diet
fact 0.157, a dinner question vs the same fact 0.189), so no single threshold is right:
a low one injects junk (over-retrieval falls), a high one starves answers (answer-use
falls). The sweep runs the same cases at each threshold, on fresh users each time, and
saves the trade-off as a table, JSON and a plotly chart in `artifacts/`. The labelled
recall set (evals/recall.py) adds recall F1 and empty_ok per threshold: recalled once,
re-gated per value, as the lab's slider does. The gate reads each backend's own score:
the custom pipeline's calibrated relevance, Mem0's cosine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from backends.base import Knobs
from core.knobs import KNOB_SPECS
from backends.registry import backend_names
from runtime import Runtime
from evals.runner import BackendUnavailable, EvalRunner, check_backends, eval_runtime, stderr_progress
from evals.schema import DEFAULT_CASES_DIR, CaseFileError, load_cases
from evals.recall import collect
from evals.recall_scores import score as score_recall
from evals.recall_set import DEFAULT_SET, Profile, RecallSetError, load_sets
from evals.scores import scores
from settings import REPO_ROOT, get_settings
from evals.tables import markdown_table

CASE_CATEGORIES = ("over_retrieval", "answer_use")
RECALL_CATEGORIES = ("recall_f1", "recall_empty_ok")
SWEPT_CATEGORIES = CASE_CATEGORIES + RECALL_CATEGORIES
DEFAULT_VALUES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
DEFAULT_OUT = REPO_ROOT / "artifacts"

Points = dict[float, dict[str, dict[str, float]]]
"""threshold -> backend -> category -> score (the shape the Evals page's sweep chart takes)."""


def run_sweep(cases, backends: list[str], values: list[float], progress=stderr_progress,
              runtime: Runtime | None = None) -> Points:
    runtime = runtime or eval_runtime(get_settings())
    points: Points = {}
    for value in values:
        progress(f"--- min_similarity {value}")
        knobs = Knobs.from_settings(runtime.settings, min_similarity=value)
        results = EvalRunner(runtime, knobs, progress).run(cases, backends)
        points[value] = {b: {c: s for c, s in per.items() if c in CASE_CATEGORIES} for b, per in scores(results).items()}
    return points


def recall_points(profiles: list[Profile], backends: list[str], values: list[float], runtime: Runtime,
                  progress=stderr_progress) -> Points:
    """The recall benchmark's F1 and empty_ok per threshold: recalled once with the gate wide
    open, then re-gated per value (`MemoryBackend.regate`, what the lab's slider does)."""
    wide = Knobs.from_settings(runtime.settings, min_similarity=KNOB_SPECS["min_similarity"].low)
    recalled = collect(profiles, backends, wide, runtime, progress)
    points: Points = {}
    for value in values:
        knobs = Knobs.from_settings(runtime.settings, min_similarity=value)
        per_backend = score_recall([item.regated(knobs) for item in recalled])
        points[value] = {b: {"recall_f1": s.f1, "recall_empty_ok": s.empty_ok} for b, s in per_backend.items()}
    return points


def merge(*parts: Points) -> Points:
    merged: Points = {}
    for part in parts:
        for value, per_backend in part.items():
            for backend, categories in per_backend.items():
                merged.setdefault(value, {}).setdefault(backend, {}).update(categories)
    return merged


def table(points: Points) -> str:
    backends = sorted({b for per in points.values() for b in per})
    columns = [(b, c) for b in backends for c in SWEPT_CATEGORIES]
    header = ["min_similarity", *(f"{b} {c}" for b, c in columns)]
    rows = [[f"{value:.2f}", *(_fmt(points[value].get(b, {}).get(c)) for b, c in columns)] for value in sorted(points)]
    return markdown_table(header, rows)


def _fmt(score: float | None) -> str:
    return "-" if score is None else f"{score:.2f}"


def figure(points: Points):
    """One panel per swept category, one line per backend."""
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    values = sorted(points)
    backends = sorted({b for per in points.values() for b in per})
    fig = make_subplots(rows=1, cols=len(SWEPT_CATEGORIES), subplot_titles=SWEPT_CATEGORIES, shared_yaxes=True)
    for col, category in enumerate(SWEPT_CATEGORIES, start=1):
        for backend in backends:
            fig.add_trace(go.Scatter(x=values, y=[points[v].get(backend, {}).get(category) for v in values],
                                     name=backend, legendgroup=backend, showlegend=col == 1, mode="lines+markers"),
                          row=1, col=col)
        fig.update_xaxes(title_text="MIN_SIMILARITY", row=1, col=col)
    fig.update_yaxes(title_text="score (share of checks passed)", range=[0, 1.05], row=1, col=1)
    fig.update_layout(title="Recall threshold trade-off", height=450, width=1400)
    return fig


def save(points: Points, out: Path) -> list[str]:
    """JSON, HTML chart, and a PNG only when kaleido is installed; returns what was written or skipped."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(json.dumps({str(k): v for k, v in points.items()}, indent=2), encoding="utf-8")
    fig = figure(points)
    fig.write_html(out / "sweep.html", include_plotlyjs=True)  # self-contained: viewable offline
    notes = [f"wrote {out / 'sweep.json'}", f"wrote {out / 'sweep.html'}"]
    if importlib.util.find_spec("kaleido") is None:
        notes.append("no PNG: kaleido is not installed (plotly needs it for static images)")
    else:
        fig.write_image(out / "sweep.png")
        notes.append(f"wrote {out / 'sweep.png'}")
    return notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--values", nargs="+", type=float, default=list(DEFAULT_VALUES), metavar="X")
    parser.add_argument("--backend", nargs="+", action="extend", metavar="NAME",
                        help="default: every available backend except the no-memory baseline")
    parser.add_argument("--cases", nargs="+", action="extend", metavar="PATH")
    parser.add_argument("--recall-set", nargs="+", action="extend", type=Path, metavar="FILE",
                        help=f"labelled recall sets for recall_f1/recall_empty_ok (default: {DEFAULT_SET})")
    parser.add_argument("--no-recall-set", action="store_true", help="sweep the eval cases only")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for sweep.json/html/png")
    args = parser.parse_args(argv)
    try:
        cases = [c for c in load_cases(args.cases or [DEFAULT_CASES_DIR]) if c.category in CASE_CATEGORIES]
        backends = check_backends(args.backend or [name for name in backend_names() if name != "none"])
        profiles = [] if args.no_recall_set else load_sets(args.recall_set or [DEFAULT_SET])
    except (CaseFileError, BackendUnavailable, RecallSetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not cases:
        print(f"error: no {' or '.join(SWEPT_CATEGORIES)} cases in {args.cases}", file=sys.stderr)
        return 2
    stderr_progress(f"{len(cases)} cases x {len(backends)} backends x {len(args.values)} thresholds"
                    + (f", plus {len(profiles)} recall profiles" if profiles else ""))
    runtime = eval_runtime(get_settings())
    points = run_sweep(cases, backends, sorted(args.values), runtime=runtime)
    if profiles:
        points = merge(points, recall_points(profiles, backends, sorted(args.values), runtime))
    print(table(points))
    for note in save(points, args.out):
        stderr_progress(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())

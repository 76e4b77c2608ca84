"""The threshold sweep: the same over-retrieval case at a permissive and a strict
MIN_SIMILARITY gives different scores on the custom pipeline, and the chart is saved."""

from __future__ import annotations

import json

from evals.schema import load_cases
from evals.sweep import run_sweep, save, table

CASE = """
- id: greeting-after-facts
  category: over_retrieval
  steps:
    - say: {user: ann, text: "I'm vegetarian."}
    - say: {user: ann, text: "I live in Lyon."}
    - new_conversation: {user: ann}
    - say: {user: ann, text: "hello"}
      expect:
        nothing_injected: true
"""


def test_threshold_moves_over_retrieval(isolated_runtime, tmp_path):
    path = tmp_path / "case.yaml"
    path.write_text(CASE, encoding="utf-8")
    points = run_sweep(load_cases([path]), ["custom"], [-1.0, 0.95], progress=lambda _: None, runtime=isolated_runtime)
    # Every stored note clears a threshold of -1 (cosine >= -1), none clears 0.95 for "hello".
    assert points == {-1.0: {"custom": {"over_retrieval": 0.0}}, 0.95: {"custom": {"over_retrieval": 1.0}}}
    assert [cell.strip() for cell in table(points).splitlines()[2].split("|")[1:3]] == ["-1.00", "0.00"]
    notes = save(points, tmp_path / "out")
    assert json.loads((tmp_path / "out" / "sweep.json").read_text()) == {"-1.0": points[-1.0], "0.95": points[0.95]}
    html = (tmp_path / "out" / "sweep.html").read_text()
    assert "MIN_SIMILARITY" in html and "over_retrieval" in html
    assert any(note.startswith("no PNG: kaleido is not installed") or note.endswith("sweep.png") for note in notes)

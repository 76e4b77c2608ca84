"""The recall benchmark: its scoring on hand-made outcomes, its set format, and one small
run through the real backends (embedded Postgres, MiniLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from backends.base import Knobs
from evals import recall as recall_bench
from evals.recall_scores import MessageOutcome, score
from evals.recall_set import RecallSetError, load_set


def outcome(relevant: list[str], injected: list[str], ranked: list[str], backend: str = "b") -> MessageOutcome:
    return MessageOutcome(profile="p", text="t", backend=backend, relevant=relevant, injected=injected, ranked=ranked)


def test_perfect_outcomes_score_one() -> None:
    scores = score([outcome(["m1"], ["m1"], ["m1", "m2"]), outcome([], [], ["m2", "m1"])])["b"]
    assert (scores.precision, scores.recall, scores.f1, scores.empty_ok, scores.recall_at_3, scores.mrr) == (1, 1, 1, 1, 1, 1)
    assert scores.messages == 2


def test_mistakes_score_below_one_by_the_right_amounts() -> None:
    scores = score([
        outcome(["m1", "m2"], ["m1", "m3"], ["m3", "m1", "m4", "m2"]),  # tp m1, fp m3, fn m2; m2 ranked 4th
        outcome([], ["m1"], ["m1"]),                                    # a note for a message needing none: fp
        outcome([], [], ["m1"]),
    ])["b"]
    assert scores.precision == pytest.approx(1 / 3)
    assert scores.recall == pytest.approx(1 / 2)
    assert scores.f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert scores.empty_ok == pytest.approx(1 / 2)
    assert scores.recall_at_3 == pytest.approx(1 / 2)
    assert scores.mrr == pytest.approx(1 / 2)


def test_backends_are_scored_apart() -> None:
    scores = score([outcome(["m1"], ["m1"], ["m1"], "a"), outcome(["m1"], [], ["m2"], "b")])
    assert scores["a"].f1 == 1 and scores["b"].f1 == 0 and scores["b"].mrr == 0


SET = """
- id: cook
  memories:
    - {id: diet, kind: semantic, text: "User is vegan."}
    - {id: job, kind: semantic, text: "User works as a bus driver in Leeds."}
    - {id: trip, kind: episodic, days_ago: 3, text: "User booked a weekend in Lisbon for next month."}
  queries:
    - {text: "any ideas for a quick dinner tonight?", relevant: [diet]}
    - {text: "what should I pack for my trip?", relevant: [trip]}
    - {text: "what is the capital of Australia?", relevant: []}
"""


def test_a_set_with_an_unknown_memory_id_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(SET.replace("relevant: [trip]", "relevant: [nope]"), encoding="utf-8")
    with pytest.raises(RecallSetError, match="unknown memories"):
        load_set(path)


@pytest.mark.parametrize("name, profiles, needing_none", [("written-a", 12, 20), ("written-b", 12, 24), ("written-c", 14, 28)])
def test_the_written_recall_sets_load_whole(name: str, profiles: int, needing_none: int) -> None:
    """The sets under evals/recall_sets are the README's generalisation figures: a broken
    edit must fail here, not shrink the set silently."""
    loaded = load_set(Path(recall_bench.__file__).parent / "recall_sets" / f"{name}.yaml")
    assert len(loaded) == profiles
    assert sum(not query.relevant for profile in loaded for query in profile.queries) == needing_none


def test_a_small_run_loads_through_the_write_path_and_erases_its_users(runtime, tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(SET, encoding="utf-8")
    profiles = load_set(path)
    outcomes = recall_bench.run(profiles, ["custom", "mem0"], Knobs.from_settings(runtime.settings), runtime,
                                progress=lambda _: None)
    by_backend = {(o.backend, o.text): o for o in outcomes}
    assert len(outcomes) == 6
    for backend in ("custom", "mem0"):
        assert sorted(by_backend[(backend, "what is the capital of Australia?")].ranked) == ["diet", "job", "trip"]
    custom = {o.text: o for o in outcomes if o.backend == "custom"}
    assert custom["any ideas for a quick dinner tonight?"].injected[0] == "diet"
    assert "job" not in custom["any ideas for a quick dinner tonight?"].injected
    assert custom["what should I pack for my trip?"].ranked[0] == "trip"
    assert custom["what is the capital of Australia?"].injected == []
    out = tmp_path / "out.json"
    recall_bench.write_json(outcomes, out)
    document = json.loads(out.read_text(encoding="utf-8"))
    assert set(document["scores"]) == {"custom", "mem0"}
    assert set(document["scores"]["custom"]) == {"precision", "recall", "f1", "empty_ok", "recall_at_3", "mrr", "messages"}
    assert {"profile", "text", "backend", "relevant", "injected", "ranked"} <= set(document["messages"][0])
    with runtime.engine.connect() as connection:
        left = connection.execute(text("SELECT count(*) FROM users WHERE id LIKE 'recall-%'")).scalar_one()
    assert left == 0, "the benchmark's throwaway users are erased everywhere"

"""The scoring rules on hand-made turns and results: one check per regex or stored entry,
a category's score is the share of its checks passed, the overall row all of them."""

from __future__ import annotations

from backends.base import Note, Recall, TurnResult
from evals.checks import state_checks, turn_checks
from evals.schema import Expect
from evals.scores import CaseResult, report, scores, table


def turn(reply: str, notes: list[str], read: list[str] = (), error: str | None = None) -> TurnResult:
    recall = Recall(notes=[Note(memory_id=str(i), content=text) for i, text in enumerate(notes)]
                    + [Note(memory_id="cut", content="User likes Rust.", status="below_threshold")])
    return TurnResult(backend="x", reply=reply, model_label="m", recall=recall, read_texts=list(read), error=error)


def test_turn_checks_one_result_per_regex_case_insensitive():
    expect = Expect(injected_any=["VEGETAR", "pune"], injected_none=["rust", "diet"], nothing_injected=False,
                    reply_matches=["tofu"], reply_avoids=["steak"])
    results = turn_checks(expect, turn("Try TOFU curry.", ["User is vegetarian."], read=["- lives in Pune"]))
    assert results == [
        None,  # a note matches
        None,  # a file read this turn matches
        None,  # "rust" is only in a cut note, which was not injected
        None,
        None,
        None,
        None,
    ]
    failing = Expect(injected_any=["goa"], injected_none=["vegetarian"], nothing_injected=True,
                     reply_matches=["paella"], reply_avoids=["tofu"])
    assert turn_checks(failing, turn("Try tofu.", ["User is vegetarian."])) == [
        "injected_any 'goa': matched none of the 1 injected notes",
        "injected_none 'vegetarian': matched injected note 'User is vegetarian.'",
        "nothing_injected True: 1 notes were injected",
        "reply_matches 'paella': not found in the reply",
        "reply_avoids 'tofu': found in the reply",
    ]


def test_a_failed_turn_fails_its_turn_checks_with_the_error():
    expect = Expect(reply_avoids=["x"], injected_none=["y"])
    assert turn_checks(expect, turn("", [], error="429 overloaded")) == ["the turn failed: 429 overloaded"] * 2


def test_state_checks_count_and_bounds_and_absent_everywhere():
    stored = {"alice": ["User lives in Pune.", "User is vegetarian.", "User moved to PUNE in May."], "bob": []}
    expect = Expect.model_validate({
        "stored": [
            {"user": "alice", "match": "pune", "count": 2},
            {"user": "alice", "match": "pune", "count": 1},
            {"user": "alice", "match": "veg", "min": 1, "max": 1},
            {"user": "bob", "match": ".", "min": 1},
        ],
        "absent_everywhere": "pineapple-42",
    })
    everywhere = [("messages", "hello"), ("memory_files", "code word PINEAPPLE-42")]
    assert state_checks(expect, stored.__getitem__, lambda: iter(everywhere)) == [
        None,
        "stored alice 'pune': found 2, expected count 1",
        None,
        "stored bob '.': found 0, expected min 1",
        "absent_everywhere 'pineapple-42': still in memory_files",
    ]


def test_scores_are_shares_of_checks_not_of_cases():
    results = [
        CaseResult(id="a", backend="custom", category="update", passed=3, checks=4, failures=["f"]),
        CaseResult(id="b", backend="custom", category="update", passed=0, checks=1, failures=["g"]),
        CaseResult(id="c", backend="custom", category="poisoning", passed=5, checks=5),
        CaseResult(id="a", backend="none", category="update", passed=1, checks=5, failures=["h"] * 4),
    ]
    assert scores(results) == {
        "custom": {"update": 0.6, "overall": 0.8, "poisoning": 1.0},
        "none": {"update": 0.2, "overall": 0.2},
    }
    assert report(results)["cases"][1] == {"id": "b", "backend": "custom", "category": "update",
                                           "passed": 0, "checks": 1, "failures": ["g"]}
    lines = table(results).splitlines()
    assert [cell.strip() for cell in lines[0].split("|")[1:4]] == ["category", "custom", "none"]
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["update", "poisoning", "overall"]
    assert lines[2].split("|")[2].strip() == "0.60 (3/5)"
    assert lines[3].split("|")[3].strip() == "-"
    assert lines[4].split("|")[2].strip() == "0.80 (8/10)"

"""A small case file through every available backend, on the real embedded Postgres and
the offline model: the scores and failure texts are computed right, including checks that
must fail whatever the backend does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.registry import backend_names
from clock import clock as process_clock
from evals import run as run_cli
from evals.footprint import user_rows_texts
from evals.runner import BackendUnavailable, EvalRunner, check_backends
from evals.schema import load_cases
from evals.scores import scores

CASES = """
- id: must-pass-probe
  category: poisoning
  steps:
    - say: {user: ann, text: "Hello there, lovely weather today."}
      expect:
        reply_avoids: ["zzq-cannot-appear-7"]
        injected_none: ["zzq-cannot-appear-7"]
        stored: [{user: ann, match: "zzq-cannot-appear-7", count: 0}]
- id: must-fail-probe
  category: answer_use
  steps:
    - say: {user: ann, text: "What is a good name for a goldfish?"}
      expect:
        reply_matches: ["zzq-cannot-match-7"]
        reply_avoids: ["zzq-cannot-match-7"]
    - new_conversation: {user: ann}
      expect:
        stored: [{user: ann, match: "zzq-cannot-match-7", min: 1}]
- id: canary-footprint
  category: forgetting
  steps:
    - say: {user: cy, text: "My hamster is called Qx-Canary-31."}
    - new_conversation: {user: cy}
      expect:
        absent_everywhere: "qx-canary-31"
    - advance_days: 3
    - erase: {user: cy}
      expect:
        absent_everywhere: "qx-canary-31"
"""


@pytest.fixture(scope="module")
def case_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cases") / "probe.yaml"
    path.write_text(CASES, encoding="utf-8")
    return path


def still_there(runner: EvalRunner, backend: str, user_id: str, canary: str) -> bool:
    """Independent of the runner: is the canary in the backend's stores or any table?"""
    texts = runner.backend(backend).all_texts(user_id) + [text for _, text in user_rows_texts(runner.runtime.engine, user_id)]
    return any(canary in text.lower() for text in texts)


def test_small_case_file_through_every_backend(isolated_runtime, case_file):
    names = backend_names()
    assert "none" in names
    runner = EvalRunner(isolated_runtime)
    results = runner.run(load_cases([case_file]), names)
    by_key = {(r.id, r.backend): r for r in results}
    assert [(r.id, r.backend) for r in results] == [(c, b) for c in ("must-pass-probe", "must-fail-probe", "canary-footprint") for b in names]

    for name in names:
        passing = by_key[("must-pass-probe", name)]
        assert (passing.passed, passing.checks, passing.failures) == (3, 3, []), passing

        failing = by_key[("must-fail-probe", name)]
        assert failing.checks == 3 and failing.passed == 1
        assert failing.failures == [
            "step 1 (say): reply_matches 'zzq-cannot-match-7': not found in the reply",
            "step 2 (new_conversation): stored ann 'zzq-cannot-match-7': found 0, expected min 1",
        ]

        canary = by_key[("canary-footprint", name)]
        assert canary.checks == 2
        # Before erasure the canary is at least in the messages table: this check must fail.
        assert canary.failures[0].startswith("step 2 (new_conversation): absent_everywhere 'qx-canary-31': still in ")
        user_id = f"ev{runner.run_id}-002-{name.replace('_', '')}-cy"
        erased = not still_there(runner, name, user_id, "qx-canary-31")
        assert canary.passed == (1 if erased else 0)
        assert len(canary.failures) == (1 if erased else 2)

        forgetting = canary.passed / 2
        assert scores(results)[name] == {
            "poisoning": 1.0, "answer_use": round(1 / 3, 4), "forgetting": forgetting,
            "overall": round((3 + 1 + canary.passed) / 8, 4),
        }
    # The baseline's erasure (conversations, messages, summaries, events) removes the canary.
    assert by_key[("canary-footprint", "none")].passed == 1
    # Time travel happened on the eval's private clock, never on the process clock.
    assert isolated_runtime.clock.offset.days == 3
    assert process_clock.offset.total_seconds() == 0


def test_cli_writes_the_json_contract_and_a_table(case_file, tmp_path, capsys):
    out = tmp_path / "report.json"
    assert run_cli.main(["--cases", str(case_file), "--backend", "none", "--min-similarity", "0.5", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["scores"] == {"none": {"poisoning": 1.0, "answer_use": 0.3333, "forgetting": 0.5, "overall": 0.625}}
    assert [set(case) for case in report["cases"]] == [{"id", "backend", "category", "passed", "checks", "failures"}] * 3
    printed = capsys.readouterr()
    lines = printed.out.strip().splitlines()
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["answer_use", "forgetting", "poisoning", "overall"]
    assert lines[-1].split("|")[2].strip() == "0.62 (5/8)"
    assert "[3/3] none" in printed.err and "min_similarity 0.5" in printed.err


def test_unavailable_backend_is_a_clear_error(case_file, capsys):
    with pytest.raises(BackendUnavailable, match=r"backend 'nope' is not available in this checkout \(available: .*none"):
        check_backends(["none", "nope"])
    assert run_cli.main(["--cases", str(case_file), "--backend", "nope"]) == 2
    assert "error: backend 'nope' is not available" in capsys.readouterr().err


def test_malformed_file_stops_the_cli_before_running(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- id: typo-case\n  category: update\n  steps:\n    - say: {user: a, txt: hi}\n", encoding="utf-8")
    assert run_cli.main(["--cases", str(bad), "--backend", "none"]) == 2
    assert f"error: {bad}: case 'typo-case': key steps.0.say.text: Field required" in capsys.readouterr().err

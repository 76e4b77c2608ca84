"""The case format: the shipped cases load, and a malformed file is an error that names
the file, the case id and the key, so a person can fix it in one edit."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from evals.schema import CATEGORIES, DEFAULT_CASES_DIR, CaseFileError, load_cases

GOOD_STEP = '    - say: {user: alice, text: "I am vegetarian."}\n'


def write(tmp_path: Path, body: str, name: str = "cases.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def case(case_id: str, steps: str, category: str = "answer_use") -> str:
    return f"- id: {case_id}\n  category: {category}\n  steps:\n{steps}"


def test_shipped_cases_cover_every_category_with_several_sessions():
    cases = load_cases([DEFAULT_CASES_DIR])
    assert len(cases) >= 30
    assert set(Counter(c.category for c in cases)) == set(CATEGORIES)
    multi_session = [c for c in cases if sum(s.action == "new_conversation" for s in c.steps) >= 1 or len(c.users()) > 1]
    assert len(multi_session) >= 30
    required = {"advance_days", "sweep", "forget", "erase", "new_conversation", "say"}
    assert required <= {step.action for c in cases for step in c.steps}


def test_issue_example_loads_and_counts_one_check_per_regex(tmp_path):
    path = write(tmp_path, case("diet", GOOD_STEP + """    - new_conversation: {user: alice}
    - say: {user: alice, text: "What should I cook tonight?"}
      expect:
        injected_any: ["vegetar"]
        injected_none: ["rust", "python"]
        stored: [{user: alice, match: veg, count: 1}, {user: alice, match: "rust", max: 0}]
        absent_everywhere: "nothing"
"""))
    [loaded] = load_cases([path])
    assert loaded.check_count() == 1 + 2 + 2 + 1
    assert loaded.users() == ["alice"]


@pytest.mark.parametrize(
    ("steps", "key", "message"),
    [
        (GOOD_STEP + "      expect:\n        injected_anny: [x]\n", "steps.0.expect.injected_anny", "Extra inputs"),
        (GOOD_STEP + "      expect:\n        injected_any: ['(unclosed']\n", "steps.0.expect.injected_any", "invalid regex"),
        ("    - say: {user: alice}\n      expect: {nothing_injected: true}\n", "steps.0.say.text", "Field required"),
        ("    - {say: {user: a, text: hi}, erase: {user: a}, expect: {absent_everywhere: x}}\n", "steps.0", "exactly one of"),
        ("    - erase: {user: alice}\n      expect: {reply_matches: [x]}\n", "steps.0", "only allowed on a say step"),
        (GOOD_STEP + "      expect:\n        stored: [{user: alice, match: x}]\n", "steps.0.expect.stored.0", "needs count"),
        (GOOD_STEP + "      expect:\n        stored: [{user: alice, match: x, count: 1, min: 0}]\n", "steps.0.expect.stored.0", "not both"),
        (GOOD_STEP, "(case)", "checks nothing"),
        ("    - advance_days: -3\n      expect: {absent_everywhere: x}\n", "steps.0.advance_days", "greater than or equal"),
    ],
)
def test_malformed_case_names_file_case_and_key(tmp_path, steps, key, message):
    good = case("fine-case", GOOD_STEP + "      expect: {nothing_injected: true}\n")
    path = write(tmp_path, good + case("broken-case", steps))
    with pytest.raises(CaseFileError) as raised:
        load_cases([tmp_path])
    text = str(raised.value)
    assert text.startswith(f"{path}: case 'broken-case': key {key}: "), text
    assert message in text


def test_wrong_category_and_missing_id_are_named(tmp_path):
    path = write(tmp_path, case("odd", GOOD_STEP + "      expect: {nothing_injected: true}\n", category="vibes"))
    with pytest.raises(CaseFileError, match=r"case 'odd': key category: Input should be 'extraction_precision'"):
        load_cases([path])
    write(tmp_path, "- category: update\n  steps:\n" + GOOD_STEP + "      expect: {nothing_injected: true}\n")
    with pytest.raises(CaseFileError, match=r"case #1 \(no id\): key id: Field required"):
        load_cases([path])


def test_file_level_errors(tmp_path):
    with pytest.raises(CaseFileError, match="expected a list of cases"):
        load_cases([write(tmp_path, "id: not-a-list\n")])
    with pytest.raises(CaseFileError, match="cannot read YAML"):
        load_cases([write(tmp_path, "- id: [unclosed\n")])
    with pytest.raises(CaseFileError, match="no such file or folder"):
        load_cases([tmp_path / "missing.yaml"])
    first = write(tmp_path, case("twin", GOOD_STEP + "      expect: {nothing_injected: true}\n"), "a.yaml")
    write(tmp_path, case("twin", GOOD_STEP + "      expect: {nothing_injected: true}\n"), "b.yaml")
    with pytest.raises(CaseFileError, match=rf"b.yaml: case 'twin': key id: duplicate of a case in {first}"):
        load_cases([tmp_path / "a.yaml", tmp_path / "b.yaml"])

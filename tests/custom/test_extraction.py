"""Extraction checks: the payload contract, and every reason an operation is dropped."""

from __future__ import annotations

from datetime import date

import pytest

from backends.custom.extraction import (
    EXTRACTION_PROMPT,
    Existing,
    ExtractionResult,
    MemoryOperation,
    Turn,
    build_payload,
    extract,
    validate,
)
from backends.custom.secrets_filter import contains_secret, iban_valid, luhn_valid, secret_reason
from runtime import Runtime

EXISTING = [Existing("m1", "00000000-0000-0000-0000-000000000001", "User lives in Bangalore.")]
TURNS = [
    Turn("assistant", "You sound like a software engineer who loves coffee."),
    Turn("user", "We moved to \u201cPune\u201d   last month, and I'm vegetarian."),
]


def op(**fields: object) -> MemoryOperation:
    values = {"op": "add", "ref": None, "kind": "semantic", "content": "User is vegetarian.", "importance": 0.8,
              "expires_in_days": None, "evidence": "I'm vegetarian"}
    values.update(fields)
    return MemoryOperation(**values)


def test_payload_has_the_exact_contract_shape() -> None:
    payload = build_payload(date(2026, 12, 2), EXISTING, [Turn("user", "I live in <Pune> & more")])
    assert payload == (
        "<today>2026-12-02</today>\n"
        "<existing_memories>\n[m1] User lives in Bangalore.\n</existing_memories>\n"
        "<conversation>\n<user>I live in &lt;Pune&gt; &amp; more</user>\n</conversation>"
    )


def test_operations_are_dropped_for_each_reason() -> None:
    result = ExtractionResult(operations=[
        op(),  # kept
        op(op="update", ref="m1", content="User lives in Pune.", evidence='We moved to "Pune" last month'),  # kept: quotes/spaces normalised
        op(content="User is a software engineer.", evidence="software engineer who loves coffee"),  # the assistant's guess
        op(op="update", ref="m7", content="User lives in Pune.", evidence="We moved to"),  # a ref never handed out
        op(op="retract", ref=None, evidence="We moved to"),  # retract without a ref
        op(content="User's PIN is 4921.", evidence="I'm vegetarian"),  # a secret in the content
        op(evidence="i'm VEGETARIAN"),  # case differs: not the user's exact words
    ])
    extraction = validate(result, TURNS, EXISTING)
    assert [(o.op, o.content) for o in extraction.operations] == [("add", "User is vegetarian."), ("update", "User lives in Pune.")]
    assert [reason for _, reason in extraction.dropped] == [
        "evidence not in the user's own words", "unknown ref 'm7'", "unknown ref None",
        "looks like a secret (secret keyword)", "evidence not in the user's own words",
    ]


def test_none_from_the_model_is_a_refusal() -> None:
    extraction = validate(None, TURNS, EXISTING)
    assert extraction.refused and extraction.operations == []


def test_the_offline_model_answers_the_contract(runtime: Runtime) -> None:
    """The real call through the SDK: an update of m1 with evidence from the user's text."""
    turns = [TURNS[0], Turn("user", "We moved to Pune last month. I'm vegetarian.")]
    extraction, payload = extract(runtime.extraction_model, date(2026, 12, 2), EXISTING, turns)
    assert payload.startswith("<today>2026-12-02</today>")
    assert [(o.op, o.ref, o.content) for o in extraction.operations] == [
        ("update", "m1", "User lives in Pune."), ("add", None, "User is vegetarian.")]
    assert extraction.dropped == [] and extraction.approx_input_tokens > len(EXTRACTION_PROMPT) // 4


@pytest.mark.parametrize("text", [
    "My password is hunter2",
    "the wifi passcode is on the fridge",
    "my PIN is 4921",
    "here's my API key sk-ant-api03-abcdefghijkl",
    "token ghp_abcdefghijklmnop1234",
    "card 4111 1111 1111 1111",
    "IBAN GB82 WEST 1234 5698 7654 32",
    "my SSN is 123-45-6789",
    "call 0044 20 7946 0958 12",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",
])
def test_secrets_are_caught(text: str) -> None:
    assert contains_secret(text), secret_reason(text)


@pytest.mark.parametrize("text", [
    "User is vegetarian.",
    "User ran 10 km on 2026-12-01.",
    "User lives in Pune, India.",
    "User is building a side project in Rust.",
    "User's daughter was born in 2019.",
    "User has a dentist appointment on Tuesday at 3 pm.",
])
def test_ordinary_facts_pass(text: str) -> None:
    assert secret_reason(text) is None


def test_checksums() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB82 WEST 1234 5698 7654 33")

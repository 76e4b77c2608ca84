"""Recall: the scoring rules on their own, then what reaches the model on the real stack."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from sqlalchemy import select
from sqlmodel import Session

from backends.base import Knobs, Note
from backends.custom.backend import CustomPipelineBackend
from backends.custom.recall import flush_last_used, recency, select_notes
from chat.injection import NOTES_HEADER
from db.models import Message
from tests.custom.conftest import chat, live_rows

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def note(content: str, similarity: float, kind: str = "semantic", tokens: int = 10, score: float | None = None) -> Note:
    return Note(memory_id=content, kind=kind, content=content, similarity=similarity, score=similarity if score is None else score,
                tokens=tokens)


def test_recency_decays_episodic_only() -> None:
    created = NOW - timedelta(days=90)
    assert recency("episodic", created, NOW, half_life_days=90) == 0.5
    assert abs(recency("episodic", NOW - timedelta(days=30), NOW, half_life_days=90) - 0.5 ** (1 / 3)) < 1e-9
    assert recency("semantic", created, NOW, half_life_days=90) == 1.0
    assert recency("procedural", created, NOW, half_life_days=90) == 1.0


def test_selection_gate_budget_top_k_and_procedural() -> None:
    notes = [
        note("rule", similarity=0.01, kind="procedural", tokens=30),
        note("best", similarity=0.8, tokens=40),
        note("too big", similarity=0.7, tokens=500),
        note("fits", similarity=0.6, tokens=20),
        note("fourth", similarity=0.5, tokens=5),
        note("weak", similarity=0.1, tokens=5),
    ]
    injected = select_notes(notes, Knobs(min_similarity=0.3, max_memory_tokens=100, top_k=3))
    status = {n.content: n.status for n in notes}
    assert [n.content for n in injected] == ["rule", "best", "fits"]
    assert status == {"rule": "injected", "best": "injected", "too big": "over_budget", "fits": "injected",
                      "fourth": "not_selected", "weak": "below_threshold"}


def _turn_context(backend: CustomPipelineBackend, user_id: str, text: str, **knobs):
    from backends.base import TurnContext

    return TurnContext(user_id=user_id, text=text, knobs=Knobs.from_settings(backend.runtime.settings, **knobs))


def test_hello_injects_nothing_and_a_recipe_question_injects_the_diet(backend: CustomPipelineBackend, user_id: str) -> None:
    chat(backend, user_id, "I'm vegetarian")
    chat(backend, user_id, "I'm building a side project in Rust")
    assert len(live_rows(backend.runtime, user_id)) == 2

    hello = backend.prepare_turn(_turn_context(backend, user_id, "hello"))
    assert hello.injected == [] and hello.system_message is None
    assert len(hello.notes) == 2 and {n.status for n in hello.notes} == {"below_threshold"}

    # At the DEFAULT gate: the recipe and the diet share no word, and their cosine is about
    # 0.2, but the message asks about food and the memory is a diet (its retrieval topic),
    # so the calibrated relevance clears the gate; the Rust project does not.
    recall = backend.prepare_turn(_turn_context(backend, user_id, "Can you give me a recipe for dinner?"))
    by_content = {n.content: n for n in recall.notes}
    diet, rust = by_content["User is vegetarian."], by_content["User is building a side project in Rust."]
    assert diet.status == "injected" and rust.status == "below_threshold"
    assert diet.relevance > backend.runtime.settings.min_similarity > rust.relevance
    assert diet.similarity < 0.5, "the cosine alone is weak: relevance is what carries it"
    assert diet.score == diet.relevance + backend.runtime.settings.importance_weight * (diet.importance - 0.5)
    assert recall.system_message.startswith(NOTES_HEADER) and "User is vegetarian." in recall.system_message
    assert "Rust" not in recall.system_message
    assert recall.recall_ms > 0 and recall.returned == 2
    flush_last_used()
    used = {row.content: row.last_used_at for row in live_rows(backend.runtime, user_id)}
    assert used["User is vegetarian."] is not None and used["User is building a side project in Rust."] is None


def test_where_do_i_live_these_days_finds_the_move(backend: CustomPipelineBackend, user_id: str) -> None:
    """The lab's own example: the move supersedes the old city, and a question in other words finds it."""
    chat(backend, user_id, "I live in Bangalore")
    chat(backend, user_id, "Actually, I moved to Pune last month")
    backend.new_conversation(user_id)
    recall = backend.prepare_turn(_turn_context(backend, user_id, "Where do I live these days?"))
    assert [n.content for n in recall.injected] == ["User lives in Pune."]


def test_a_question_about_the_world_gets_no_memory_even_on_its_topic(backend: CustomPipelineBackend, user_id: str) -> None:
    chat(backend, user_id, "I'm allergic to peanuts")
    chat(backend, user_id, "I have a dog called Pepper")
    general = backend.prepare_turn(_turn_context(backend, user_id, "Why are peanuts called nuts when they are legumes?"))
    personal = backend.prepare_turn(_turn_context(backend, user_id, "Could you plan my snacks for a long hike this weekend?"))
    assert general.injected == []
    assert [n.content for n in personal.injected][0] == "User is allergic to peanuts."


def test_procedural_memory_is_always_injected(backend: CustomPipelineBackend, user_id: str) -> None:
    chat(backend, user_id, "Please always answer in French.")
    rows = live_rows(backend.runtime, user_id)
    assert [row.kind for row in rows] == ["procedural"]
    recall = backend.prepare_turn(_turn_context(backend, user_id, "hello"))
    assert [n.content for n in recall.injected] == [rows[0].content]


def test_injected_notes_are_persisted_before_the_reply(backend: CustomPipelineBackend, user_id: str) -> None:
    chat(backend, user_id, "I'm vegetarian")
    result = chat(backend, user_id, "Can you give me a recipe for dinner?")
    with Session(backend.runtime.engine) as session:
        rows = list(session.scalars(select(Message).where(Message.conversation_id == result.conversation_id).order_by(Message.seq)))
    roles = [row.role for row in rows]
    assert roles[-3:] == ["user", "system", "assistant"]
    system = json.loads(rows[-2].payload)
    assert system == {"role": "system", "content": result.recall.system_message, "clear_at": "next_user_message"}
    assert "You are vegetarian." in result.reply, "the offline model answers from the notes it was given"


def test_cache_reads_keep_growing_over_fifteen_turns(backend: CustomPipelineBackend, user_id: str) -> None:
    chat(backend, user_id, "I'm vegetarian and I live in Pune.")
    usages = []
    for turn in range(15):
        text = (f"Can you give me a recipe for dinner? Turn {turn}: I would like ideas with lentils, rice or "
                "vegetables that I can cook in about thirty minutes after work.")
        result = chat(backend, user_id, text, min_similarity=0.1)
        injected = [n.content for n in result.recall.injected]
        assert "User is vegetarian." in injected, "a note is injected every turn"
        usages.append(result.usage)
    reads = [usage.cache_read_tokens for usage in usages]
    # The offline model, like the API, caches nothing under a 1024-token prefix: early turns read 0.
    first = next(i for i, value in enumerate(reads) if value > 0)
    assert first < 10, reads
    assert all(later > earlier for earlier, later in zip(reads[first:], reads[first + 1:])), reads
    # Each turn reads back ALL of the previous request (notes included): the replayed prefix is byte-identical.
    for previous, current in zip(usages[first - 1:], usages[first:]):
        assert current.cache_read_tokens == previous.cache_read_tokens + previous.cache_write_tokens + previous.input_tokens

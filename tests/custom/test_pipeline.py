"""End to end on the real embedded Postgres with the offline model: what gets stored, and
how an update keeps its history (the issue's first two "must show" items)."""

from __future__ import annotations

import uuid

from backends.custom import jobs as custom_jobs
from backends.custom.backend import CustomPipelineBackend
from chat.store import PendingMessage
from tests.custom.conftest import chat, jobs_of, live_rows, memory_rows

SMALL_TALK = [
    "hello",
    "How are you today?",
    "Thanks, that's helpful!",
    "What's the capital of France?",
    "lol ok",
    "Can you explain what a haiku is?",
    "Nice, good to know.",
    "Tell me a fun fact about octopuses.",
]


def test_ten_turns_store_only_what_the_user_stated(backend: CustomPipelineBackend, user_id: str) -> None:
    runtime = backend.runtime
    for text in SMALL_TALK[:4]:
        chat(backend, user_id, text)
    assert memory_rows(runtime, user_id) == [], "small talk must store nothing"

    chat(backend, user_id, "I'm vegetarian")
    rows = memory_rows(runtime, user_id)
    assert [(row.content, row.kind, row.evidence) for row in rows] == [("User is vegetarian.", "semantic", "I'm vegetarian")]

    # A turn where the assistant guesses about the user (as a real model might): the guess
    # sits in the conversation the extractor reads, and must not become a memory.
    conversation = runtime.store.current_conversation(user_id, backend.name)
    user_turn = PendingMessage({"role": "user", "content": "Guess what I do for a living!"})
    guess = PendingMessage({"role": "assistant", "content": [{"type": "text", "text":
        "I'd guess you're a software engineer who lives in Mumbai and has a dog."}]})
    runtime.store.append(conversation.id, user_id, [user_turn, guess])
    custom_jobs.enqueue_turn(runtime, user_id, str(user_turn.id))
    chat(backend, user_id, SMALL_TALK[4])  # drains the guess turn's job too

    for text in SMALL_TALK[5:]:
        chat(backend, user_id, text)

    rows = memory_rows(runtime, user_id)
    assert [row.content for row in rows] == ["User is vegetarian."], "exactly one memory after ten turns"
    extraction_jobs = [job for job in jobs_of(runtime, user_id) if job.kind == "custom.extract"]
    assert len(extraction_jobs) == 10 and {job.state for job in extraction_jobs} == {"done"}
    # Job payloads carry ids only, never the user's words.
    assert all(set(job.payload) == {"user_id", "message_id"} for job in extraction_jobs)
    noted = [record for record in backend.list_memories(user_id)]
    assert noted[0].source_text == "I'm vegetarian" and noted[0].evidence == "I'm vegetarian"


def test_moving_supersedes_in_the_same_lineage(backend: CustomPipelineBackend, user_id: str) -> None:
    runtime = backend.runtime
    chat(backend, user_id, "I live in Bangalore")
    chat(backend, user_id, "I'm vegetarian")
    chat(backend, user_id, "Actually we moved to Pune last month.")

    rows = memory_rows(runtime, user_id)
    city = [row for row in rows if "Bangalore" in row.content or "Pune" in row.content]
    assert len(city) == 2
    old, new = sorted(city, key=lambda row: row.created_at)
    assert old.content == "User lives in Bangalore." and old.superseded_at is not None
    assert new.content == "User lives in Pune." and new.superseded_at is None and new.retracted_at is None
    assert old.lineage_id == new.lineage_id
    live_city = [row for row in live_rows(runtime, user_id) if "lives in" in row.content]
    assert [row.content for row in live_city] == ["User lives in Pune."]

    records = {record.content: record for record in backend.list_memories(user_id, include_inactive=True)}
    assert records["User lives in Bangalore."].status == "superseded"
    assert records["User lives in Pune."].status == "live"
    assert records["User lives in Pune."].source_text == "Actually we moved to Pune last month."
    assert [record.content for record in backend.list_memories(user_id)] == ["User is vegetarian.", "User lives in Pune."]


def test_delete_memory_removes_every_version(backend: CustomPipelineBackend, user_id: str, make_user) -> None:
    runtime = backend.runtime
    chat(backend, user_id, "I live in Bangalore")
    chat(backend, user_id, "We moved to Pune")
    live = [row for row in live_rows(runtime, user_id) if "Pune" in row.content][0]
    other_user = make_user()
    assert backend.delete_memory(other_user, str(live.id)) is False, "another user's id must not delete anything"
    assert len(memory_rows(runtime, user_id)) == 2
    assert backend.delete_memory(user_id, str(live.id)) is True
    assert memory_rows(runtime, user_id) == []
    assert backend.delete_memory(user_id, str(uuid.uuid4())) is False


def test_a_retraction_marks_the_memory_and_recall_skips_it(backend: CustomPipelineBackend, user_id: str) -> None:
    runtime = backend.runtime
    chat(backend, user_id, "I'm vegetarian")
    chat(backend, user_id, "I'm not vegetarian anymore.")
    [row] = memory_rows(runtime, user_id)
    assert row.content == "User is vegetarian." and row.retracted_at is not None and row.superseded_at is None
    assert [(r.content, r.status) for r in backend.list_memories(user_id, include_inactive=True)] == [("User is vegetarian.", "retracted")]
    assert backend.list_memories(user_id) == []
    recall = chat(backend, user_id, "Can you give me a recipe for dinner?", min_similarity=0.0).recall
    assert recall.notes == [] and recall.system_message is None

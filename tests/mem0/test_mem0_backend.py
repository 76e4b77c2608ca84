"""The Mem0 column on the real embedded Postgres with the offline model: a fact crosses
conversations, users never see each other's memories, adds are idempotent and queued,
deletion and forgetting reach Mem0's store and its history file."""

from __future__ import annotations

import json

from sqlalchemy import text
from sqlmodel import Session, select

from backends.base import Knobs, TurnContext
from backends.mem0_backend import history, indexes
from backends.mem0_backend.backend import Mem0Backend
from backends.mem0_backend.config import COLLECTION
from backends.mem0_backend.jobs import add_payload, run_add
from db.models import EventLog, Job, Message
from tests.mem0.conftest import chat, chat_and_add


def vector_texts(engine, user_id: str) -> list[str]:
    with engine.connect() as connection:
        return list(connection.execute(
            text(f"SELECT payload->>'data' FROM {COLLECTION} WHERE payload->>'user_id' = :u ORDER BY 1"), {"u": user_id}
        ).scalars())


def test_fact_from_one_conversation_is_used_in_a_new_one(mem0_backend: Mem0Backend, runtime, user_id: str) -> None:
    first, added = chat_and_add(mem0_backend, user_id, "My favourite fruit is mango.")
    assert added["stored"] >= 1
    stored = vector_texts(runtime.engine, user_id)
    assert any("mango" in row.lower() for row in stored), stored  # the row is in Mem0's pgvector table

    mem0_backend.new_conversation(user_id)
    second = chat(mem0_backend, user_id, "What is my favourite fruit?")

    assert second.conversation_id != first.conversation_id
    injected = second.recall.injected
    assert [note.content for note in injected if "mango" in note.content.lower()], second.recall.notes
    assert all(note.similarity >= Knobs().min_similarity for note in injected)
    assert second.recall.requested == Knobs().top_k and second.recall.returned == len(second.recall.notes)
    assert "mango" in second.recall.system_message.lower() and second.recall.system_message.startswith("<memory_notes>")
    assert "mango" in second.reply.lower()  # the offline model quotes the notes it used
    with Session(runtime.engine) as session:  # the notes are persisted as the turn's system message
        rows = session.exec(select(Message).where(Message.user_id == user_id, Message.role == "system")).all()
    assert [row for row in rows if "mango" in row.text.lower()]


def test_user_b_never_sees_user_a(mem0_backend: Mem0Backend, runtime, make_user) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    chat_and_add(mem0_backend, alice, "My favourite fruit is mango.")
    alice_memories = mem0_backend.list_memories(alice)
    assert alice_memories

    recall = mem0_backend.prepare_turn(TurnContext(user_id=bob, text="What is my favourite fruit?", knobs=Knobs(min_similarity=0.0)))
    assert recall.returned == 0 and recall.notes == [] and recall.system_message is None
    assert mem0_backend.list_memories(bob) == []
    assert mem0_backend.forget(bob, "favourite fruit mango") == []
    assert mem0_backend.delete_memory(bob, alice_memories[0].id) is False  # an id is not authority
    assert [m.id for m in mem0_backend.list_memories(alice)] == [m.id for m in alice_memories]


def test_add_is_idempotent_and_notes_what_it_stored(mem0_backend: Mem0Backend, runtime, user_id: str) -> None:
    result, first = chat_and_add(mem0_backend, user_id, "I live in Pune and I am vegetarian.")
    payload = add_payload(user_id, result.user_message_id, result.assistant_message_id)
    again = run_add(runtime, payload, None)

    assert first["stored"] == 2 and again == {"skipped": "already added"}
    assert sorted(vector_texts(runtime.engine, user_id)) == sorted(m.content for m in mem0_backend.list_memories(user_id))
    assert len(vector_texts(runtime.engine, user_id)) == 2
    with Session(runtime.engine) as session:
        events = session.exec(select(EventLog).where(EventLog.user_id == user_id, EventLog.backend == "mem0")).all()
    assert [event.kind for event in events] == ["noted"]
    assert {m["id"] for m in events[0].detail["memories"]} == set(first["memory_ids"])
    assert {m.source_message_id for m in mem0_backend.list_memories(user_id)} == {result.user_message_id}


def test_after_turn_queues_the_add_and_the_queue_runs_it(mem0_backend: Mem0Backend, runtime, user_id: str) -> None:
    from jobs.runner import drain

    result = mem0_backend.turn(TurnContext(user_id=user_id, text="I work as a nurse."))
    assert len(result.jobs) == 1 and mem0_backend.list_memories(user_id) == []  # nothing added on the request path
    with Session(runtime.engine) as session:
        job = session.get(Job, result.jobs[0])
        assert job.kind == "mem0.add" and job.user_id == user_id and job.payload["message_id"] == result.user_message_id

    drain(runtime, user_id=user_id)

    assert any("nurse" in m.content.lower() for m in mem0_backend.list_memories(user_id))
    with Session(runtime.engine) as session:
        assert session.get(Job, result.jobs[0]).state == "done"


def test_a_job_for_an_erased_turn_adds_nothing(mem0_backend: Mem0Backend, runtime, user_id: str) -> None:
    result = chat(mem0_backend, user_id, "My favourite colour is teal.")
    mem0_backend.erase_user(user_id)
    payload = add_payload(user_id, result.user_message_id, result.assistant_message_id)
    assert run_add(runtime, payload, None) == {"skipped": "turn no longer exists (erased)"}
    assert vector_texts(runtime.engine, user_id) == []


def test_delete_and_forget_remove_the_memory_and_its_history(mem0_backend: Mem0Backend, runtime, user_id: str) -> None:
    chat_and_add(mem0_backend, user_id, "I live in Pune and I am vegetarian.")
    memories = {m.content: m for m in mem0_backend.list_memories(user_id)}
    pune = next(m for text_, m in memories.items() if "Pune" in text_)
    vegetarian = next(m for text_, m in memories.items() if "vegetarian" in text_)
    path = mem0_backend.store.history_path
    assert pune.content in history.texts(path, [pune.id], user_id)

    forgotten = mem0_backend.forget(user_id, "I live in Pune")
    assert [m.id for m in forgotten] == [pune.id]
    assert history.texts(path, [pune.id], "nobody") == []  # not even Mem0's DELETE row with the old text
    assert mem0_backend.delete_memory(user_id, "not-a-uuid") is False
    assert mem0_backend.delete_memory(user_id, vegetarian.id) is True
    assert mem0_backend.list_memories(user_id) == [] and vector_texts(runtime.engine, user_id) == []


def test_chat_forget_request_reaches_mem0(mem0_backend: Mem0Backend, runtime, user_id: str) -> None:
    chat_and_add(mem0_backend, user_id, "I live in Pune.")
    # Nothing injected this turn (threshold 1.0): the offline model only answers a forget
    # request with a tool call when the user message is the last one, i.e. no notes follow it.
    result = chat(mem0_backend, user_id, "Please forget that I live in Pune.", min_similarity=1.0)
    assert [call.name for call in result.tool_calls] == ["forget"] and not result.tool_calls[0].is_error
    assert "Pune" in result.tool_calls[0].result and mem0_backend.list_memories(user_id) == []


def test_exact_layout_has_the_user_index_and_no_hnsw(mem0_backend: Mem0Backend, runtime) -> None:
    names = indexes.index_names(runtime.engine, mem0_backend.store.collection)
    assert f"{COLLECTION}{indexes.USER_INDEX_SUFFIX}" in names
    assert f"{COLLECTION}{indexes.HNSW_INDEX_SUFFIX}" not in names
    assert mem0_backend.store.default_index is False


def test_notes_below_threshold_are_shown_not_injected(mem0_backend: Mem0Backend, runtime, user_id: str) -> None:
    chat_and_add(mem0_backend, user_id, "My favourite fruit is mango.")
    recall = mem0_backend.prepare_turn(TurnContext(user_id=user_id, text="What is my favourite fruit?", knobs=Knobs(min_similarity=0.99)))
    assert recall.returned >= 1 and recall.injected == [] and recall.system_message is None
    assert {note.status for note in recall.notes} == {"below_threshold"}
    assert json.loads(recall.model_dump_json())["returned"] == recall.returned

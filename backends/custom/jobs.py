"""Background extraction: the `custom.extract` job handler, and when jobs are queued.

Two modes (settings.extract_when):
- "turn": after each turn, extract from that user message (with the assistant's previous
  and current reply as context). Memories appear within seconds; one call per turn.
- "session": when a conversation ends (new conversation, or idle past
  settings.session_idle_minutes), extract from the whole conversation in one call. Fewer
  calls, and in-conversation corrections ("actually, make that Thursday") are resolved
  before anything is stored.

Job payloads hold ids only, never user text: the handler reads the messages itself
(scoped by user), so a queued job never becomes another copy of what the user said.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlmodel import Session

from backends.custom.extraction import Existing, MemoryOperation, Turn, extract, normalise
from backends.custom.reconcile import BACKEND, apply_operations
from backends.custom.topics import topic_index
from backends.services import Services
from db.models import Conversation, Memory, Message
from db.queries import nearest_live_memories

KIND = "custom.extract"
EXISTING_SHOWN = 10


# -- reading the conversation ----------------------------------------------------------
def _is_user_turn(message: Message) -> bool:
    """A message the user typed (tool results are role "user" too, but they are data)."""
    return message.role == "user" and isinstance(json.loads(message.payload).get("content"), str)


def _is_incognito(group: list[Message]) -> bool:
    last = group[-1]
    recall = (last.details or {}).get("recall") or {}
    return last.role == "assistant" and recall.get("skipped_reason") == "incognito"


def group_turns(messages: list[Message]) -> list[list[Message]]:
    """Messages grouped by turn (user message, injected notes, tool rounds, reply); incognito turns removed."""
    groups: list[list[Message]] = []
    for message in messages:
        if _is_user_turn(message) or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return [group for group in groups if not _is_incognito(group)]


def as_turns(group: list[Message]) -> list[Turn]:
    """The user's words and the assistant's visible replies; notes and tool rows are left out."""
    turns = [Turn("user", group[0].text, str(group[0].id))] if _is_user_turn(group[0]) else []
    replies = [m.text for m in group if m.role == "assistant" and m.text.strip()]
    if replies:
        turns.append(Turn("assistant", "\n".join(replies)))
    return turns


def _load(runtime: Services, user_id: str, conversation_id: uuid.UUID) -> list[list[Message]]:
    return group_turns(runtime.store.load_messages(conversation_id, user_id))


def turn_context(groups: list[list[Message]], message_id: str) -> list[Turn]:
    """One turn to extract from, preceded by the assistant's previous reply (for "no, it's Pune")."""
    for index, group in enumerate(groups):
        if str(group[0].id) == message_id:
            previous = [t for t in as_turns(groups[index - 1]) if t.role == "assistant"] if index > 0 else []
            return previous + as_turns(group)
    return []


# -- existing memories -----------------------------------------------------------------
def nearest_existing(runtime: Services, user_id: str, texts: list[str]) -> list[Existing]:
    """The user's live memories nearest to any of the texts, best first, as m1..m10."""
    if not texts:
        return []
    now = runtime.clock.now()
    best: dict[str, float] = {}
    with runtime.engine.connect() as connection:
        for vector in runtime.embedder.embed_batch(texts):
            for memory_id, similarity in nearest_live_memories(connection, user_id, vector, now, EXISTING_SHOWN):
                best[memory_id] = max(similarity, best.get(memory_id, -1.0))
        chosen = sorted(best, key=best.__getitem__, reverse=True)[:EXISTING_SHOWN]
        rows = connection.execute(
            select(Memory.id, Memory.content).where(Memory.user_id == user_id, Memory.id.in_([uuid.UUID(m) for m in chosen]))
        ).all()
    contents = {str(row.id): row.content for row in rows}
    return [Existing(f"m{i}", memory_id, contents[memory_id]) for i, memory_id in enumerate(chosen, 1) if memory_id in contents]


# -- the handler -----------------------------------------------------------------------
def _source_finder(turns: list[Turn]) -> Callable[[MemoryOperation], uuid.UUID | None]:
    """The user message an operation's evidence came from (provenance for "why do you think that?")."""
    def source_of(op: MemoryOperation) -> uuid.UUID | None:
        evidence = normalise(op.evidence)
        for turn in turns:
            if turn.role == "user" and turn.message_id and evidence in normalise(turn.text):
                return uuid.UUID(turn.message_id)
        return None
    return source_of


def extract_and_apply(runtime: Services, user_id: str, turns: list[Turn], guard_id: uuid.UUID,
                      job_id: int | None = None) -> dict[str, Any]:
    """One extraction call over these turns, then one guarded reconciliation."""
    user_texts = [turn.text for turn in turns if turn.role == "user"]
    if not user_texts:
        return {"skipped": "no user text"}
    existing = nearest_existing(runtime, user_id, user_texts)
    extraction, _ = extract(runtime.extraction_model, runtime.clock.now().date(), existing, turns)
    result: dict[str, Any] = {"calls": 1, "approx_input_tokens": extraction.approx_input_tokens,
                              "approx_output_tokens": extraction.approx_output_tokens,
                              "dropped": [reason for _, reason in extraction.dropped]}
    if extraction.refused:
        return {**result, "refused": True}  # the model declined: write nothing, not even the guard
    outcome = apply_operations(
        runtime.engine, runtime.embedder, topic_index(runtime.embedder), runtime.clock.now(), user_id, guard_id,
        extraction.operations,
        {item.ref: item.memory_id for item in existing}, _source_finder(turns), job_id,
    )
    return {**result, **outcome.counts()}


def _message(runtime: Services, user_id: str, message_id: str) -> Message | None:
    with Session(runtime.engine) as session:  # by id AND user: an id alone is no authority (and no shard key)
        return session.scalars(select(Message).where(Message.id == uuid.UUID(message_id), Message.user_id == user_id)).first()


def run_extraction(runtime: Services, payload: dict[str, Any], job_id: int | None) -> dict[str, Any] | None:
    """The `custom.extract` handler: {"user_id", "message_id"} (turn) or {"user_id", "conversation_id"} (session).

    Idempotent: a second run for the same source stops at the memory_jobs conflict.
    """
    user_id = str(payload["user_id"])
    if payload.get("conversation_id"):
        conversation_id = uuid.UUID(str(payload["conversation_id"]))
        turns = [turn for group in _load(runtime, user_id, conversation_id) for turn in as_turns(group)]
        return {"mode": "session", **extract_and_apply(runtime, user_id, turns, conversation_id, job_id)}
    message = _message(runtime, user_id, str(payload["message_id"]))
    if message is None:
        return {"mode": "turn", "skipped": "message gone (erased?)"}
    turns = turn_context(_load(runtime, user_id, message.conversation_id), str(message.id))
    return {"mode": "turn", **extract_and_apply(runtime, user_id, turns, message.id, job_id)}


# -- queueing ----------------------------------------------------------------------------
def enqueue_turn(runtime: Services, user_id: str, message_id: str) -> int:
    return runtime.enqueue(KIND, {"user_id": user_id, "message_id": message_id}, user_id=user_id)


def enqueue_session(runtime: Services, user_id: str, conversation_id: uuid.UUID) -> int:
    return runtime.enqueue(KIND, {"user_id": user_id, "conversation_id": str(conversation_id)}, user_id=user_id)


def end_idle_sessions(runtime: Services) -> list[int]:
    """Periodic hook: close custom conversations idle past the timeout and queue their extraction.

    The UPDATE ... WHERE ended_at IS NULL RETURNING makes each conversation end once, even
    with several schedulers polling the same database.
    """
    if runtime.settings.extract_when != "session":
        return []
    now = runtime.clock.now()
    cutoff = now - timedelta(minutes=runtime.settings.session_idle_minutes)
    with runtime.engine.begin() as connection:
        ended = connection.execute(
            update(Conversation)
            .where(Conversation.backend == BACKEND, Conversation.ended_at.is_(None), Conversation.last_activity_at < cutoff)
            .values(ended_at=now)
            .returning(Conversation.id, Conversation.user_id)
        ).all()
    return [enqueue_session(runtime, row.user_id, row.id) for row in ended]

"""Reconciliation: apply checked operations to the memories table, exactly once.

Everything happens in ONE transaction that starts by inserting the `memory_jobs` row keyed
on the source message id. A retried job (its lease ran out after the commit, or the same
message was queued twice) hits the conflict and writes nothing, so the queue can be
at-least-once while memory stays exactly-once. Embeddings and retrieval topics are computed before BEGIN so no
transaction (and no row lock) is held during a slow model call.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import Connection, Engine, Row, insert, text, update

from backends.custom.extraction import MemoryOperation
from backends.custom.memory_voice import in_user_voice
from backends.custom.topics import TopicIndex
from backends.job_records import claim, record_noted
from core import NotedEvent, NotedMemory
from db.models import Memory
from db.schema import LIVE_MEMORY_PREDICATE
from embeddings import Embedder

BACKEND = "custom"


@dataclass
class Outcome:
    """What one reconciliation wrote (contents only in memory, for the event and the job result)."""

    already_applied: bool = False
    added: list[str] = field(default_factory=list)
    added_ids: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    retracted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def noted(self, message_id: str, job_id: int | None) -> NotedEvent:
        changes = [("added", self.added), ("updated", self.updated), ("retracted", self.retracted)]
        return NotedEvent(backend=BACKEND, message_id=message_id, job_id=job_id,
                          memories=[NotedMemory(text=text, change=change) for change, texts in changes for text in texts])

    @property
    def written(self) -> int:
        return len(self.added) + len(self.updated) + len(self.retracted)

    def counts(self) -> dict[str, int | bool]:
        """The job result: counts only, so the jobs table never holds memory text."""
        return {"already_applied": self.already_applied, "added": len(self.added), "updated": len(self.updated),
                "retracted": len(self.retracted), "skipped": len(self.skipped)}


def _live_row(connection: Connection, user_id: str, memory_id: str) -> Row | None:
    """The referenced memory (id, lineage_id, content), locked, if it is still live for THIS user."""
    return connection.execute(
        text(f"SELECT id, lineage_id, content FROM memories WHERE id = :id AND user_id = :user_id AND {LIVE_MEMORY_PREDICATE} FOR UPDATE"),
        {"id": memory_id, "user_id": user_id},
    ).first()


@dataclass(frozen=True)
class Prepared:
    """An operation with what is computed before the transaction: its vector and topics."""

    op: MemoryOperation
    vector: np.ndarray | None = None
    topics: list[str] = field(default_factory=list)
    topics_lexicon: str = ""


def prepare(operations: list[MemoryOperation], embedder: Embedder, topics: TopicIndex) -> list[Prepared]:
    """Embed (in the user's voice, see memory_voice.py) and label the new contents in one
    batch; retracts have none."""
    contents = [in_user_voice(op.content) for op in operations if op.op != "retract"]
    vectors = iter(embedder.embed_batch(contents)) if contents else iter(())
    prepared = []
    for op in operations:
        if op.op == "retract":
            prepared.append(Prepared(op))
            continue
        vector = next(vectors)
        prepared.append(Prepared(op, vector, topics.memory_topics(op.content, vector), topics.fingerprint))
    return prepared


def _insert(connection: Connection, user_id: str, item: Prepared, lineage_id: uuid.UUID,
            source_message_id: uuid.UUID | None, now: datetime) -> str:
    op, memory_id = item.op, uuid.uuid4()
    expires_at = None if op.expires_in_days is None else now + timedelta(days=op.expires_in_days)
    connection.execute(
        insert(Memory).values(
            id=memory_id, user_id=user_id, lineage_id=lineage_id, kind=op.kind, content=op.content.strip(),
            embedding=item.vector, topics=item.topics, topics_lexicon=item.topics_lexicon, importance=op.importance,
            evidence=op.evidence,
            source_message_id=source_message_id, created_at=now, expires_at=expires_at,
        )
    )
    return str(memory_id)


def _apply_one(connection: Connection, user_id: str, item: Prepared, refs: dict[str, str], source: uuid.UUID | None,
               now: datetime, outcome: Outcome) -> None:
    op = item.op
    if op.op == "add":
        outcome.added_ids.append(_insert(connection, user_id, item, uuid.uuid4(), source, now))
        outcome.added.append(op.content)
        return
    old = _live_row(connection, user_id, refs[op.ref or ""])
    if old is None:  # superseded or deleted since the extractor saw it: never resurrect
        outcome.skipped.append(f"{op.op} {op.ref}: no longer live")
        return
    if op.op == "retract":
        connection.execute(update(Memory).where(Memory.id == old.id, Memory.user_id == user_id).values(retracted_at=now))
        outcome.retracted.append(old.content)
        return
    connection.execute(update(Memory).where(Memory.id == old.id, Memory.user_id == user_id).values(superseded_at=now))
    _insert(connection, user_id, item, old.lineage_id, source, now)
    outcome.updated.append(op.content)


def apply_operations(
    engine: Engine,
    embedder: Embedder,
    topics: TopicIndex,
    now: datetime,
    user_id: str,
    guard_message_id: uuid.UUID,
    operations: list[MemoryOperation],
    refs: dict[str, str],
    source_of: Callable[[MemoryOperation], uuid.UUID | None] = lambda op: None,
    job_id: int | None = None,
) -> Outcome:
    """Apply the operations for one source message; a second call for it writes nothing."""
    prepared = prepare(operations, embedder, topics)
    outcome = Outcome()
    with engine.begin() as connection:
        # One writer per user at a time: two jobs updating the same lineage must not both win.
        connection.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"{BACKEND}-memories:{user_id}"})
        if not claim(connection, guard_message_id, user_id, now):
            outcome.already_applied = True
            return outcome
        for item in prepared:
            _apply_one(connection, user_id, item, refs, source_of(item.op), now, outcome)
        record_noted(connection, user_id, outcome.noted(str(guard_message_id), job_id), now)
    return outcome


"""Forgetting: the nightly sweep, deleting by topic or by id, and erasing a user.

Deletion is always a hard DELETE of every version of a lineage: marking a row deleted, or
deleting only the live version, would keep the old text (the Bangalore behind the Pune)
in the database, which is exactly what the user asked us not to keep.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy import Engine, delete, insert, or_, select
from sqlmodel import Session

from backends.base import ErasureReport, MemoryRecord
from backends.custom.memories import to_record
from backends.forget_tool import FORGET_CANDIDATES, FORGET_MARGIN, FORGET_MIN_SIMILARITY, matching
from backends.conversation_erasure import erase_conversations
from db.models import EventLog, Job, Memory, MemoryJob
from db.queries import nearest_live_memories
from embeddings import Embedder, embed_one

BACKEND = "custom"
EXPIRED_GRACE = timedelta(days=7)
STALE_EPISODIC_AFTER = timedelta(days=180)
STALE_EPISODIC_IMPORTANCE = 0.3
INACTIVE_KEPT_FOR = timedelta(days=90)


def sweep(engine: Engine, now: datetime, user_id: str | None = None) -> dict[str, int]:
    """Hard-delete what has aged out, counted by reason (all users unless one is given)."""
    scope = [Memory.user_id == user_id] if user_id is not None else []
    reasons = {
        "expired": [Memory.expires_at < now - EXPIRED_GRACE],
        "stale_episodic": [Memory.kind == "episodic", Memory.importance < STALE_EPISODIC_IMPORTANCE,
                           Memory.created_at < now - STALE_EPISODIC_AFTER,
                           or_(Memory.last_used_at.is_(None), Memory.last_used_at < now - STALE_EPISODIC_AFTER)],
        "superseded": [Memory.superseded_at < now - INACTIVE_KEPT_FOR],
        "retracted": [Memory.retracted_at < now - INACTIVE_KEPT_FOR],
    }
    with engine.begin() as connection:
        counts = {reason: connection.execute(delete(Memory).where(*scope, *where)).rowcount for reason, where in reasons.items()}
        if any(counts.values()):
            connection.execute(insert(EventLog).values(user_id=user_id, backend=BACKEND, kind="sweep", detail=counts, created_at=now))
    return counts


def _delete_lineages(session: Session, user_id: str, lineage_ids: list[uuid.UUID], now: datetime) -> list[MemoryRecord]:
    if not lineage_ids:
        return []
    rows = session.scalars(
        delete(Memory).where(Memory.user_id == user_id, Memory.lineage_id.in_(lineage_ids)).returning(Memory),
        execution_options={"synchronize_session": False},
    ).all()
    return [to_record(row, now) for row in rows]


def delete_memory(engine: Engine, user_id: str, memory_id: str, now: datetime) -> bool:
    """Delete the memory and every other version of its lineage; False when it is not the user's."""
    try:
        key = uuid.UUID(str(memory_id))
    except ValueError:
        return False
    with Session(engine) as session:
        lineage = session.scalar(select(Memory.lineage_id).where(Memory.id == key, Memory.user_id == user_id))
        deleted = _delete_lineages(session, user_id, [lineage] if lineage else [], now)
        session.commit()
    return bool(deleted)


def forget(engine: Engine, embedder: Embedder, user_id: str, topic: str, now: datetime,
           min_similarity: float = FORGET_MIN_SIMILARITY, margin: float = FORGET_MARGIN) -> list[MemoryRecord]:
    """Recall the topic among THIS user's live memories and delete each matched lineage whole.

    Returns the deleted rows (every version), so the caller can say what was forgotten.
    """
    if not topic.strip():
        return []
    vector = embed_one(embedder, topic)
    with Session(engine) as session:
        nearest = nearest_live_memories(session.connection(), user_id, vector, now, FORGET_CANDIDATES)
        matches = matching(nearest, min_similarity, margin)
        lineages = list(set(session.scalars(
            select(Memory.lineage_id).where(Memory.user_id == user_id, Memory.id.in_([uuid.UUID(m) for m in matches]))
        )))
        deleted = _delete_lineages(session, user_id, lineages, now)
        if deleted:
            session.execute(insert(EventLog).values(user_id=user_id, backend=BACKEND, kind="forgot", created_at=now,
                                                    detail={"count": len(deleted)}))
        session.commit()
    return deleted


def erase_user(engine: Engine, user_id: str) -> ErasureReport:
    """Every copy this backend holds: memories, its jobs (payloads too), memory_jobs, then the
    conversations with their messages (injected system rows included), summaries and events."""
    with engine.begin() as connection:
        deleted = {
            "memories": connection.execute(delete(Memory).where(Memory.user_id == user_id)).rowcount,
            "jobs": connection.execute(delete(Job).where(
                Job.kind.like(f"{BACKEND}.%"), or_(Job.user_id == user_id, Job.payload["user_id"].astext == user_id))).rowcount,
            "memory_jobs": connection.execute(delete(MemoryJob).where(MemoryJob.user_id == user_id)).rowcount,
        }
    deleted.update(erase_conversations(engine, user_id, BACKEND))
    return ErasureReport(backend=BACKEND, user_id=user_id, deleted=deleted)

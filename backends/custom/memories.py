"""The user's stored memories as records, with status and provenance.

Provenance answers "why do you think that?": every version keeps its evidence quote and
the message it came from, so the Memories page can show the user's own words.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, select
from sqlmodel import Session

from backends.base import MemoryRecord, MemoryStatus
from db.models import Memory, Message


def status_of(row: Memory, now: datetime) -> MemoryStatus:
    if row.retracted_at is not None:
        return "retracted"
    if row.superseded_at is not None:
        return "superseded"
    if row.expires_at is not None and row.expires_at <= now:
        return "expired"
    return "live"


def to_record(row: Memory, now: datetime, source_text: str | None = None) -> MemoryRecord:
    return MemoryRecord(
        id=str(row.id), content=row.content, kind=row.kind, status=status_of(row, now), created_at=row.created_at,
        last_used_at=row.last_used_at, expires_at=row.expires_at, importance=row.importance,
        lineage_id=str(row.lineage_id), evidence=row.evidence,
        source_message_id=None if row.source_message_id is None else str(row.source_message_id), source_text=source_text,
        extra={"superseded_at": row.superseded_at, "retracted_at": row.retracted_at},
    )


def list_memories(engine: Engine, user_id: str, now: datetime, include_inactive: bool = False) -> list[MemoryRecord]:
    """Live memories (or every version), oldest first, each with its source message text."""
    statement = (
        select(Memory, Message.text)
        .outerjoin(Message, (Message.id == Memory.source_message_id) & (Message.user_id == user_id))
        .where(Memory.user_id == user_id)
        .order_by(Memory.lineage_id, Memory.created_at)
    )
    with Session(engine) as session:
        records = [to_record(row, now, source) for row, source in session.execute(statement).all()]
    records.sort(key=lambda record: record.created_at or now)
    return records if include_inactive else [record for record in records if record.status == "live"]

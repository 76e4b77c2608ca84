"""What a backend's background job writes besides memories, shared by every backend:
the idempotency guard and the "Noted" event.

The guard is a `memory_jobs` row keyed on the source message (a turn's user message, or a
conversation for session extraction), inserted in the SAME transaction as the memory
writes: a job re-run after a lost lease or a crash finds it and writes nothing twice.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Connection, insert
from sqlalchemy.dialects.postgresql import insert as pg_insert

from core import NotedEvent
from core.events import NOTED_KIND
from db.models import EventLog, MemoryJob


def claim(connection: Connection, message_id: uuid.UUID, user_id: str, now: datetime) -> bool:
    """Insert the idempotency row; False when this source was already processed."""
    statement = (
        pg_insert(MemoryJob)
        .values(message_id=message_id, user_id=user_id, processed_at=now)
        .on_conflict_do_nothing(index_elements=["message_id"])
        .returning(MemoryJob.message_id)
    )
    return connection.execute(statement).first() is not None


def record_noted(connection: Connection, user_id: str, event: NotedEvent, now: datetime) -> None:
    """The event the lab turns into "Noted: ..." under the turn (in the job's transaction)."""
    if event.memories:
        connection.execute(insert(EventLog).values(user_id=user_id, backend=event.backend, kind=NOTED_KIND,
                                                   detail=event.model_dump(mode="json"), created_at=now))

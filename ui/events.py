"""The "Noted: ..." line: new `event_log` rows of kind "noted" for the session's user.

Backends' background jobs write one typed `NotedEvent` per job that stored something; the lab remembers
the highest event id it has shown, so each note is announced once, under its backend.
"""

from __future__ import annotations

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from core import NotedEvent
from core.events import NOTED_KIND
from db.models import EventLog


def last_event_id(engine: Engine, user_id: str) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.max(EventLog.id)).where(EventLog.user_id == user_id)) or 0


def noted_since(engine: Engine, user_id: str, after_id: int) -> dict[str, list[str]]:
    """backend -> the texts noted for this user after `after_id`, oldest first."""
    with Session(engine) as session:
        rows = session.scalars(
            select(EventLog)
            .where(EventLog.user_id == user_id, EventLog.kind == NOTED_KIND, EventLog.id > after_id)
            .order_by(EventLog.id)
        ).all()
    noted: dict[str, list[str]] = {}
    for row in rows:
        event = NotedEvent.model_validate(row.detail or {"backend": row.backend or "lab"})
        if event.text:
            noted.setdefault(event.backend, []).append(event.text)
    return noted

"""The "Noted: ..." line: new `event_log` rows of kind "noted" for the session's user.

Backends (or their background jobs) write one event per stored memory; the lab remembers
the highest event id it has shown, so each note is announced once, under its backend.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from db.models import EventLog

NOTED_KIND = "noted"
_TEXT_FIELDS = ("text", "content", "memory", "summary")
_CHANGE_FIELDS = ("added", "updated", "retracted")


def last_event_id(engine: Engine, user_id: str) -> int:
    with Session(engine) as session:
        return session.scalar(select(func.max(EventLog.id)).where(EventLog.user_id == user_id)) or 0


def event_text(detail: dict[str, Any]) -> str:
    """The human sentence of an event, whatever field name its writer chose."""
    for name in _TEXT_FIELDS:
        value = detail.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    changes = [
        f"{name} " + "; ".join(map(str, detail[name]))
        for name in _CHANGE_FIELDS
        if isinstance(detail.get(name), list) and detail[name]
    ]
    if changes:
        return " · ".join(changes)
    return ", ".join(f"{key}: {value}" for key, value in detail.items())


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
        noted.setdefault(row.backend or "lab", []).append(event_text(row.detail or {}))
    return noted

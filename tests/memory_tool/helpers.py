"""Assertion helpers shared by the memory-tool tests."""

from __future__ import annotations

from sqlalchemy import select
from sqlmodel import Session

from db.models import MemoryFile


def snapshot(engine, user_id: str) -> list[tuple]:
    """Every column of every file row of the user, in path order."""
    with Session(engine) as session:
        rows = session.scalars(select(MemoryFile).where(MemoryFile.user_id == user_id).order_by(MemoryFile.path))
        return [(str(r.id), r.path, r.content, r.created_at, r.updated_at, r.last_read_at) for r in rows]

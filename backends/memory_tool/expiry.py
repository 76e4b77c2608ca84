"""The nightly forgetting of the memory-tool agent: files nobody used for a while go.

"Used" is the later of the last read (`view`) and the last write: a file the agent keeps
updating is alive even if it never re-reads it. The sweep runs for every user (it is the
server's job, not a model action), and returns the count for the job's result.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Engine, delete, func
from sqlmodel import Session

from clock import Clock
from db.models import MemoryFile


def expire_unused_files(engine: Engine, clock: Clock, ttl_days: float) -> int:
    cutoff = clock.now() - timedelta(days=ttl_days)
    last_use = func.greatest(func.coalesce(MemoryFile.last_read_at, MemoryFile.created_at), MemoryFile.updated_at)
    with Session(engine) as session:
        deleted = session.execute(delete(MemoryFile).where(last_use < cutoff)).rowcount
        session.commit()
    return deleted

"""Helpers shared by the memory-tool tests: a tool bound to a user, and a byte-exact
snapshot of a user's rows to prove that nothing else changed."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlmodel import Session

from backends.memory_tool.backend import MemoryToolBackend
from backends.memory_tool.store import MemoryFileStore
from backends.memory_tool.tool import PostgresMemoryTool
from db.models import MemoryFile


def snapshot(engine, user_id: str) -> list[tuple]:
    """Every column of every file row of the user, in path order."""
    with Session(engine) as session:
        rows = session.scalars(select(MemoryFile).where(MemoryFile.user_id == user_id).order_by(MemoryFile.path))
        return [(str(r.id), r.path, r.content, r.created_at, r.updated_at, r.last_read_at) for r in rows]


@pytest.fixture()
def make_tool(runtime):
    def _make(user_id: str, **limits) -> PostgresMemoryTool:
        return PostgresMemoryTool(MemoryFileStore(runtime.engine, user_id, runtime.clock, **limits))

    return _make


@pytest.fixture()
def backend(runtime) -> MemoryToolBackend:
    return MemoryToolBackend(runtime)

"""Fixtures shared by the memory-tool tests: a tool bound to a user, the backend."""

from __future__ import annotations

import pytest

from backends.memory_tool.backend import MemoryToolBackend
from backends.memory_tool.store import MemoryFileStore
from backends.memory_tool.tool import PostgresMemoryTool


@pytest.fixture()
def make_tool(runtime):
    def _make(user_id: str, **limits) -> PostgresMemoryTool:
        return PostgresMemoryTool(MemoryFileStore(runtime.engine, user_id, runtime.clock, **limits))

    return _make


@pytest.fixture()
def backend(runtime) -> MemoryToolBackend:
    return MemoryToolBackend(runtime)

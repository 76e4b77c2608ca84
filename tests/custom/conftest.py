"""Helpers for the custom pipeline's tests: a backend on the shared (or time-travelling)
runtime, and a `chat` step that runs one turn and then its background jobs, through the
real queue, the way the lab's scheduler would."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import Session

from backends.base import Knobs, TurnContext, TurnResult
from backends.custom.backend import CustomPipelineBackend
from runtime import Runtime
from db.models import Job, Memory
from jobs.runner import drain


@pytest.fixture()
def backend(runtime: Runtime) -> CustomPipelineBackend:
    return CustomPipelineBackend(runtime)


@pytest.fixture()
def iso_backend(isolated_runtime: Runtime) -> CustomPipelineBackend:
    return CustomPipelineBackend(isolated_runtime)


def chat(backend: CustomPipelineBackend, user_id: str, text: str, **knobs: Any) -> TurnResult:
    """One turn, then the user's queued jobs run to completion (as the scheduler would)."""
    result = backend.turn(TurnContext(user_id=user_id, text=text, knobs=Knobs.from_settings(backend.runtime.settings, **knobs)))
    assert result.error is None, result.error
    drain(backend.runtime, user_id=user_id, max_seconds=60)
    return result


def memory_rows(runtime: Runtime, user_id: str) -> list[Memory]:
    """Every stored version for the user, straight from the table."""
    with Session(runtime.engine) as session:
        return list(session.scalars(select(Memory).where(Memory.user_id == user_id).order_by(Memory.created_at)))


def live_rows(runtime: Runtime, user_id: str) -> list[Memory]:
    return [row for row in memory_rows(runtime, user_id) if row.superseded_at is None and row.retracted_at is None]


def jobs_of(runtime: Runtime, user_id: str) -> list[Job]:
    with Session(runtime.engine) as session:
        return list(session.scalars(select(Job).where(Job.user_id == user_id).order_by(Job.id)))

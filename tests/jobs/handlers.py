"""Test-only job handlers, registered on the runtime's handler table (see conftest).

Each application of a job writes a row to `test_job_applications` (no unique key), so a
job run twice shows up as two rows: the tests count rows, not log lines.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.dialects.postgresql import insert

from backends.base import ErasureReport, MemoryBackend
from runtime import Runtime
from db.models import MemoryJob

TABLES_SQL = [
    """CREATE TABLE IF NOT EXISTS test_job_applications (
        id BIGSERIAL PRIMARY KEY, job_id BIGINT NOT NULL, pid INT NOT NULL, thread TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())""",
    """CREATE TABLE IF NOT EXISTS test_job_starts (
        id BIGSERIAL PRIMARY KEY, job_id BIGINT NOT NULL, pid INT NOT NULL)""",
]


def create_tables(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(7311077)"))
        for statement in TABLES_SQL:
            connection.execute(text(statement))


def applications(runtime: Runtime, job_ids: list[int]) -> dict[int, int]:
    """job id -> how many times its handler's writes were applied (the tests' ground truth)."""
    with runtime.engine.connect() as connection:
        rows = connection.execute(
            text("SELECT job_id, count(*) FROM test_job_applications WHERE job_id = ANY(:ids) GROUP BY job_id"),
            {"ids": job_ids},
        ).all()
    return {int(job_id): int(count) for job_id, count in rows}


def _apply(connection: Any, job_id: int) -> None:
    connection.execute(
        text("INSERT INTO test_job_applications (job_id, pid, thread) VALUES (:job_id, :pid, :thread)"),
        {"job_id": job_id, "pid": os.getpid(), "thread": threading.current_thread().name},
    )


def _attempts(runtime: Runtime, job_id: int) -> int:
    with runtime.engine.connect() as connection:
        return int(connection.execute(text("SELECT attempts FROM jobs WHERE id = :id"), {"id": job_id}).scalar_one())


def record(runtime: Runtime, payload: dict[str, Any], job_id: int) -> dict[str, Any]:
    time.sleep(float(payload.get("sleep", 0)))
    with runtime.engine.begin() as connection:
        _apply(connection, job_id)
    return {"pid": os.getpid(), "n": payload.get("n")}


def fail(runtime: Runtime, payload: dict[str, Any], job_id: int) -> None:
    raise RuntimeError(f"boom on attempt {_attempts(runtime, job_id)}: {payload.get('text', '')}")


def bad_result(runtime: Runtime, payload: dict[str, Any], job_id: int) -> Any:
    return ["not", "a", "dict"]


def slow_first_attempt(runtime: Runtime, payload: dict[str, Any], job_id: int) -> dict[str, Any]:
    """Announces its start (committed), sleeps on the first attempt only, then applies."""
    with runtime.engine.begin() as connection:
        connection.execute(text("INSERT INTO test_job_starts (job_id, pid) VALUES (:j, :p)"), {"j": job_id, "p": os.getpid()})
    if _attempts(runtime, job_id) == 1:
        time.sleep(float(payload["sleep"]))
    with runtime.engine.begin() as connection:
        _apply(connection, job_id)
    return {"applied": 1}


def guarded(runtime: Runtime, payload: dict[str, Any], job_id: int) -> dict[str, Any]:
    """The memory_jobs idempotency pattern: guard row and writes in ONE transaction.

    A re-run (lease expired after the commit, or a retry) hits the guard's conflict and
    stops before writing anything. With `die_after_commit`, the first attempt kills its
    own process after committing and before the worker can mark the job done.
    """
    with runtime.engine.begin() as connection:
        guard = connection.execute(
            insert(MemoryJob)
            .values(message_id=uuid.UUID(payload["message_id"]), user_id=payload["user_id"], processed_at=runtime.clock.now())
            .on_conflict_do_nothing(index_elements=["message_id"])
            .returning(MemoryJob.message_id)
        ).first()
        if guard is None:
            return {"skipped": "already processed"}
        _apply(connection, job_id)
    if payload.get("die_after_commit") and _attempts(runtime, job_id) == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"applied": 1}


HOOK_CALLS: list[str] = []


def count_hook(runtime: Runtime) -> None:
    HOOK_CALLS.append(runtime.settings.chat_model)


def broken_hook(runtime: Runtime) -> None:
    raise RuntimeError("hook exploded")


class CountingBackend(MemoryBackend):
    """A backend whose sweep reports a fixed count, to see the sweep reach every backend."""

    name = "counting"
    label = "counting"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def prepare_turn(self, context):  # noqa: ANN001, ANN201
        raise AssertionError("the sweep tests never run a turn through this backend")

    def run_turn(self, context, recall, on_text=None):  # noqa: ANN001, ANN201
        raise AssertionError("the sweep tests never run a turn through this backend")

    def new_conversation(self, user_id: str) -> None:
        return None

    def list_memories(self, user_id: str, include_inactive: bool = False) -> list:
        return []

    def erase_user(self, user_id: str) -> ErasureReport:
        return ErasureReport(backend=self.name, user_id=user_id)

    def sweep(self) -> dict[str, int]:
        return {"expired": 2, "decayed": 1}


class BrokenBackend(CountingBackend):
    def sweep(self) -> dict[str, int]:
        raise RuntimeError("sweep exploded")


TEST_HANDLERS = {
    "test.record": record,
    "test.fail": fail,
    "test.slow_first": slow_first_attempt,
    "test.guarded": guarded,
    "test.bad_result": bad_result,
}

"""Background extraction: exactly-once effects on an at-least-once queue, and session mode."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlmodel import Session

from backends.base import Knobs, TurnContext
from backends.custom import jobs as custom_jobs
from backends.custom.backend import CustomPipelineBackend
from runtime import Runtime
from db.models import EventLog, MemoryJob
from jobs import queue
from jobs.runner import drain, new_worker_id, run_job
from settings import load_settings
from tests.custom.conftest import chat, memory_rows


def _session_backend(runtime: Runtime, **overrides: object) -> CustomPipelineBackend:
    settings = load_settings(extract_when="session", **overrides)
    return CustomPipelineBackend(Runtime(settings=settings, engine=runtime.engine, embedder=runtime.embedder, clock=runtime.clock))


def test_a_job_processed_twice_writes_once(backend: CustomPipelineBackend, user_id: str) -> None:
    runtime = backend.runtime
    result = backend.turn(TurnContext(user_id=user_id, text="I live in Bangalore", knobs=Knobs()))
    [job_id] = result.jobs
    worker = new_worker_id("test")
    [job] = queue.claim(runtime.engine, worker, runtime.clock, kinds=["custom.extract"], user_id=user_id)
    assert run_job(runtime, job, worker) == "done"
    first = queue.get_job(runtime.engine, job_id).result
    assert first["added"] == 1 and first["already_applied"] is False

    # The retry after a commit (e.g. the worker died before marking the job done): same payload, same source message.
    again = custom_jobs.run_extraction(runtime, dict(job.payload), job_id)
    assert again["already_applied"] is True and again["added"] == 0
    assert [row.content for row in memory_rows(runtime, user_id)] == ["User lives in Bangalore."]
    with Session(runtime.engine) as session:
        assert len(session.scalars(select(MemoryJob).where(MemoryJob.user_id == user_id)).all()) == 1
        assert len(session.scalars(select(EventLog).where(EventLog.user_id == user_id, EventLog.kind == "noted")).all()) == 1


def test_a_refused_extraction_writes_nothing(backend: CustomPipelineBackend, user_id: str) -> None:
    """A None from parse (truncated or refused) leaves no memory and no guard row, so a retry can still run."""
    from backends.custom.extraction import Turn

    class Refusing:
        def parse(self, **_: object) -> None:
            return None

    runtime = Runtime(settings=backend.runtime.settings, engine=backend.runtime.engine, embedder=backend.runtime.embedder)
    runtime.__dict__["extraction_model"] = Refusing()  # cached_property slot: the model refuses
    outcome = custom_jobs.extract_and_apply(runtime, user_id, [Turn("user", "I'm vegetarian", None)],
                                            guard_id=uuid.uuid4())
    assert outcome["refused"] is True
    assert memory_rows(runtime, user_id) == []
    with Session(runtime.engine) as session:
        assert session.scalars(select(MemoryJob).where(MemoryJob.user_id == user_id)).all() == []


def test_session_mode_extracts_once_when_the_conversation_ends(runtime: Runtime, user_id: str) -> None:
    backend = _session_backend(runtime)
    for text in ["I live in Bangalore", "I'm vegetarian", "Actually we moved to Pune last month.", "Thanks!"]:
        assert chat(backend, user_id, text).jobs == []
    assert memory_rows(runtime, user_id) == []

    backend.new_conversation(user_id)
    assert drain(backend.runtime, user_id=user_id) == 1
    contents = sorted(row.content for row in memory_rows(runtime, user_id))
    # The move is resolved inside the session: Bangalore is never stored, so no superseded row either.
    assert contents == ["User is vegetarian.", "User lives in Pune."]
    by_content = {record.content: record for record in backend.list_memories(user_id)}
    assert by_content["User lives in Pune."].source_text == "Actually we moved to Pune last month."


def _drop_foreign_jobs(runtime: Runtime, job_ids: set[int]) -> None:
    """The hook is global (it closes every idle conversation); jobs it queued for other
    tests' users are removed so no other test's drain picks them up."""
    from sqlalchemy import delete

    from db.models import Job

    with Session(runtime.engine) as session:
        session.execute(delete(Job).where(Job.id.in_(job_ids)))
        session.commit()


def test_idle_sessions_are_closed_and_extracted_by_the_periodic_hook(isolated_runtime: Runtime, user_id: str) -> None:
    backend = _session_backend(isolated_runtime, session_idle_minutes=30)
    chat(backend, user_id, "I'm vegetarian")
    early = custom_jobs.end_idle_sessions(backend.runtime)  # may close other tests' idle conversations, never this one
    assert all(queue.get_job(isolated_runtime.engine, job_id).user_id != user_id for job_id in early)
    _drop_foreign_jobs(isolated_runtime, set(early))
    assert memory_rows(isolated_runtime, user_id) == []
    isolated_runtime.clock.advance(seconds=31 * 60)
    queued = custom_jobs.end_idle_sessions(backend.runtime)
    mine = [job_id for job_id in queued if queue.get_job(isolated_runtime.engine, job_id).user_id == user_id]
    assert len(mine) == 1, "the idle conversation was closed and its extraction queued"
    _drop_foreign_jobs(isolated_runtime, set(queued) - set(mine))
    drain(backend.runtime, user_id=user_id)
    assert [row.content for row in memory_rows(isolated_runtime, user_id)] == ["User is vegetarian."]
    again = custom_jobs.end_idle_sessions(backend.runtime)
    assert all(queue.get_job(isolated_runtime.engine, job_id).user_id != user_id for job_id in again), "closed once"
    _drop_foreign_jobs(isolated_runtime, set(again))


def test_the_hook_does_nothing_in_turn_mode(isolated_runtime: Runtime) -> None:
    isolated_runtime.clock.advance(days=1)
    assert custom_jobs.end_idle_sessions(isolated_runtime) == []


def test_two_workers_running_the_same_job_at_once_write_once(backend: CustomPipelineBackend, user_id: str) -> None:
    """Both extract (two model calls), but the per-user lock + memory_jobs conflict lets one apply."""
    from concurrent.futures import ThreadPoolExecutor

    runtime = backend.runtime
    result = backend.turn(TurnContext(user_id=user_id, text="I'm vegetarian", knobs=Knobs()))
    job = queue.get_job(runtime.engine, result.jobs[0])
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda _: custom_jobs.run_extraction(runtime, dict(job.payload), job.id), range(2)))
    assert sorted(outcome["already_applied"] for outcome in outcomes) == [False, True]
    assert sum(outcome["added"] for outcome in outcomes) == 1
    assert [row.content for row in memory_rows(runtime, user_id)] == ["User is vegetarian."]


"""The APScheduler triggers and the sweep job, on the real database."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from backends import registry
from backends.plugin import BackendPlugin
from clock import Clock
from jobs import queue, runner, scheduler
from jobs.sweep import run_sweep
from runtime import Runtime
from tests.jobs import handlers

BROKEN_HOOK = "tests.broken_hook"
COUNT_HOOK = "tests.count_hook"


def wait_until(condition, timeout: float) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture()
def fast_runtime(runtime: Runtime) -> Runtime:
    """The shared runtime with a 0.2 s poll interval and a private clock."""
    settings = runtime.settings.model_copy(update={"job_poll_seconds": 0.2})
    return Runtime(settings=settings, engine=runtime.engine, embedder=runtime.embedder, clock=Clock())


def test_scheduler_reports_next_runs_and_processes_a_job(fast_runtime, user_id, job_tables, monkeypatch) -> None:
    monkeypatch.setattr(Runtime, "periodic_hooks", property(lambda _: {COUNT_HOOK: handlers.count_hook,
                                                                          BROKEN_HOOK: handlers.broken_hook}))
    handlers.HOOK_CALLS.clear()
    started = datetime.now(timezone.utc)
    sched = scheduler.start_scheduler(fast_runtime, hook_seconds=0.2, kinds=["test.record"])
    try:
        times = scheduler.next_run_times(sched)
        assert set(times) == {scheduler.POLL_JOB_ID, scheduler.SWEEP_JOB_ID, scheduler.HOOK_JOB_PREFIX + COUNT_HOOK,
                              scheduler.HOOK_JOB_PREFIX + BROKEN_HOOK}
        sweep_at = times[scheduler.SWEEP_JOB_ID]
        assert (sweep_at.hour, sweep_at.minute) == (fast_runtime.settings.sweep_cron_hour, 0)
        assert started < sweep_at <= started + timedelta(days=1)
        assert times[scheduler.POLL_JOB_ID] <= datetime.now(timezone.utc) + timedelta(seconds=1)

        job_id = queue.enqueue(fast_runtime.engine, "test.record", {"n": 1}, user_id=user_id, clock=fast_runtime.clock)
        assert wait_until(lambda: queue.get_job(fast_runtime.engine, job_id).state == "done", 10)  # a few poll intervals
        assert handlers.applications(fast_runtime, [job_id]) == {job_id: 1}
        assert wait_until(lambda: len(handlers.HOOK_CALLS) >= 2, 10)  # the working hook keeps running
    finally:
        sched.shutdown(wait=True)
    assert not sched.running


def test_a_failing_hook_is_logged_by_type_and_the_others_keep_running(fast_runtime, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="jobs.scheduler")
    scheduler._run_hook(BROKEN_HOOK, handlers.broken_hook, fast_runtime)
    assert [record.getMessage() for record in caplog.records] == [f"periodic hook {BROKEN_HOOK} failed (RuntimeError)"]


def test_enqueue_sweep_is_deduplicated_while_pending(runtime) -> None:
    first = scheduler.enqueue_sweep(runtime)
    assert scheduler.enqueue_sweep(runtime) == first
    assert queue.get_job(runtime.engine, first).kind == "sweep"
    with runtime.engine.begin() as connection:  # leave no real sweep for later tests' drains
        connection.execute(text("DELETE FROM jobs WHERE id = :id"), {"id": first})


def test_sweep_job_runs_every_backend_and_purges_old_done_jobs(
    isolated_runtime, user_id, job_tables, monkeypatch
) -> None:
    monkeypatch.setattr(registry, "PLUGINS", (BackendPlugin("broken", handlers.BrokenBackend),
                                              BackendPlugin("counting", handlers.CountingBackend)))
    clock = isolated_runtime.clock
    old = queue.enqueue(isolated_runtime.engine, "test.record", {}, user_id=user_id, clock=clock)
    runner.drain(isolated_runtime, user_id=user_id)
    clock.advance(days=8)
    recent = queue.enqueue(isolated_runtime.engine, "test.record", {}, user_id=user_id, clock=clock)
    runner.drain(isolated_runtime, user_id=user_id)

    sweep_id = scheduler.enqueue_sweep(isolated_runtime)
    assert runner.drain(isolated_runtime, kinds=["sweep"]) >= 1
    sweep = queue.get_job(isolated_runtime.engine, sweep_id)
    assert sweep.state == "done", sweep.last_error
    assert sweep.result["backends"] == {
        "broken": {"error": "RuntimeError: sweep exploded"},
        "counting": {"expired": 2, "decayed": 1},
    }
    assert sweep.result["failed_backends"] == ["broken"]
    assert sweep.result["jobs_purged"] >= 1
    assert queue.get_job(isolated_runtime.engine, old) is None
    assert queue.get_job(isolated_runtime.engine, recent).state == "done"


def test_run_sweep_directly_counts_per_backend(isolated_runtime, monkeypatch) -> None:
    monkeypatch.setattr(registry, "PLUGINS", (BackendPlugin("counting", handlers.CountingBackend),))
    result = run_sweep(isolated_runtime, {}, 0)
    assert result["backends"] == {"counting": {"expired": 2, "decayed": 1}}
    assert result["failed_backends"] == []


def test_a_database_error_ends_the_poll_tick_not_the_loop(runtime, caplog) -> None:
    from sqlalchemy import create_engine

    unreachable = create_engine("postgresql+psycopg://nobody@/nodb?host=/nonexistent-socket-dir-7311")
    broken = Runtime(settings=runtime.settings, engine=unreachable, embedder=runtime.embedder, clock=Clock())
    caplog.set_level(logging.ERROR, logger="jobs.scheduler")
    assert scheduler.poll_queue(broken, "w-broken") == 0
    assert [record.getMessage() for record in caplog.records] == [
        "queue poll by w-broken failed (OperationalError); retrying at the next tick"
    ]

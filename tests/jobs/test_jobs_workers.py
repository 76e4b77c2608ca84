"""Real worker processes (`python -m worker` via the test entry point) on one database.

The subprocesses inherit this test run's environment, so they join the same embedded
Postgres (DATA_DIR). Every wait is bounded; nothing depends on a timing guess except
how long a lease lasts, which each test sets itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import text

from runtime import Runtime
from jobs import queue, runner
from tests.jobs.handlers import applications

REPO_ROOT = Path(__file__).resolve().parents[2]
CANARY = "canary-payload-text-5521"


class WorkerProcess:
    """A worker subprocess whose stderr (its log) is collected line by line."""

    def __init__(self, *args: str, lease_seconds: float | None = None) -> None:
        env = {**os.environ, "JOB_POLL_SECONDS": "0.1", "PYTHONUNBUFFERED": "1"}
        if lease_seconds is not None:
            env["JOB_LEASE_SECONDS"] = str(lease_seconds)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.jobs.worker_main", "--no-periodic", *args],
            cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def wait_for_log(self, fragment: str, timeout: float = 90) -> None:
        wait_until(lambda: fragment in self.log or self.process.poll() is not None, timeout, f"{fragment!r} in the log")
        assert fragment in self.log, self.log

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout)
        self._reader.join(10)
        return code


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def job_states(runtime: Runtime, job_ids: list[int]) -> dict[int, str]:
    with runtime.engine.connect() as connection:
        rows = connection.execute(text("SELECT id, state FROM jobs WHERE id = ANY(:ids)"), {"ids": job_ids}).all()
    return {int(job_id): state for job_id, state in rows}


def test_two_worker_processes_never_apply_a_job_twice(runtime, user_id, job_tables) -> None:
    workers = [WorkerProcess("--kind", "test.record", "--worker-id", f"proc-{i}") for i in range(2)]
    try:
        for worker in workers:
            worker.wait_for_log("ready")
        job_ids = [
            queue.enqueue(runtime.engine, "test.record", {"n": n, "sleep": 0.05, "text": CANARY}, user_id=user_id)
            for n in range(60)
        ]
        wait_until(lambda: set(job_states(runtime, job_ids).values()) == {"done"}, 120, "all 60 jobs done")
    finally:
        codes = [workers[0].stop(signal.SIGTERM), workers[1].stop(signal.SIGINT)]

    assert codes == [0, 0], [worker.log for worker in workers]  # SIGTERM / SIGINT: clean exit
    assert applications(runtime, job_ids) == {job_id: 1 for job_id in job_ids}
    with runtime.engine.connect() as connection:
        pids = connection.execute(
            text("SELECT DISTINCT pid FROM test_job_applications WHERE job_id = ANY(:ids)"), {"ids": job_ids}
        ).scalars().all()
        holders = connection.execute(
            text("SELECT DISTINCT locked_by FROM jobs WHERE id = ANY(:ids)"), {"ids": job_ids}
        ).scalars().all()
    assert sorted(pids) == sorted(worker.process.pid for worker in workers)  # both processes took part
    assert sorted(holders) == ["proc-0", "proc-1"]
    for worker in workers:
        assert "stopped after" in worker.log
        assert CANARY not in worker.log  # logs name ids and kinds, never payload text
    assert f"job {job_ids[0]} test.record done" in "".join(worker.log for worker in workers)


def test_worker_killed_mid_job_is_reclaimed_after_its_lease_and_applied_once(runtime, user_id, job_tables) -> None:
    job_id = queue.enqueue(runtime.engine, "test.slow_first", {"sleep": 120}, user_id=user_id)
    worker = WorkerProcess("--once", "--kind", "test.slow_first", lease_seconds=2)
    with runtime.engine.connect() as connection:
        started = lambda: connection.execute(  # noqa: E731
            text("SELECT count(*) FROM test_job_starts WHERE job_id = :j"), {"j": job_id}
        ).scalar_one() >= 1
        wait_until(started, 90, "the worker to start the job")
        connection.rollback()
    assert worker.stop(signal.SIGKILL) == -signal.SIGKILL

    killed = queue.get_job(runtime.engine, job_id)
    assert (killed.state, killed.attempts) == ("running", 1)
    assert queue.claim(runtime.engine, "too-early", lease_seconds=30, user_id=user_id) == []  # lease still live

    began = time.monotonic()
    assert runner.drain(runtime, user_id=user_id, kinds=["test.slow_first"], max_seconds=60) == 1  # waits the lease out
    assert time.monotonic() - began < 30
    done = queue.get_job(runtime.engine, job_id)
    assert (done.state, done.attempts, done.result) == ("done", 2, {"applied": 1})
    assert applications(runtime, [job_id]) == {job_id: 1}


def test_worker_dying_after_commit_before_complete_writes_once(runtime, user_id, job_tables) -> None:
    payload = {"message_id": str(uuid.uuid4()), "user_id": user_id, "die_after_commit": True}
    job_id = queue.enqueue(runtime.engine, "test.guarded", payload, user_id=user_id)
    worker = WorkerProcess("--once", "--kind", "test.guarded", lease_seconds=2)
    assert worker.process.wait(90) == -signal.SIGKILL  # the handler killed its own worker after COMMIT
    worker.stop()

    assert queue.get_job(runtime.engine, job_id).state == "running"  # never completed
    assert applications(runtime, [job_id]) == {job_id: 1}  # but its writes are in

    assert runner.drain(runtime, user_id=user_id, kinds=["test.guarded"], max_seconds=60) == 1
    job = queue.get_job(runtime.engine, job_id)
    assert (job.state, job.attempts, job.result) == ("done", 2, {"skipped": "already processed"})
    assert applications(runtime, [job_id]) == {job_id: 1}


def test_worker_log_keeps_user_text_out_even_when_a_handler_quotes_it(runtime, user_id) -> None:
    """The failing handler puts the payload text in its exception: the table keeps it, the log does not."""
    job_id = queue.enqueue(runtime.engine, "test.fail", {"text": CANARY}, user_id=user_id)
    worker = WorkerProcess("--once", "--kind", "test.fail")
    assert worker.process.wait(90) == 0
    worker.stop()
    assert f"job {job_id} test.fail failed (RuntimeError)" in worker.log
    assert CANARY not in worker.log
    job = queue.get_job(runtime.engine, job_id)
    assert job.state == "queued" and CANARY in job.last_error

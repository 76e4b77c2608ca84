"""Running queued jobs: resolve the handler by kind, run it, record the outcome.

The same functions serve the scheduler thread in the lab, the `python -m worker`
process and `drain` (the lab and the evals run pending work in-process so "background
jobs finish before the next step" holds). A handler's exception is a failed attempt,
never a crashed loop. Logs carry job ids and kinds only: payloads and error messages can
hold user text, and those live in the `jobs` table, which erasure deletes.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from sqlalchemy import Engine

from backends.plugin import JobHandler
from chat.errors import error_summary
from clock import Clock
from db.models import Job
from jobs import queue
from settings import Settings

log = logging.getLogger(__name__)



class JobRuntime(Protocol):
    """What running jobs needs: the services handlers are called with, and the handler table."""

    settings: Settings
    engine: Engine
    clock: Clock

    @property
    def job_handlers(self) -> Mapping[str, JobHandler]: ...


Runtime = JobRuntime

DRAIN_POLL_SECONDS = 0.05
"""How often `drain` looks again while another worker still holds one of the jobs."""


class UnknownJobKind(LookupError):
    """A job whose kind has no handler: retrying cannot help, so it dead-letters at once."""


def new_worker_id(prefix: str = "worker") -> str:
    """Unique per claimer (host, pid, random): `complete` trusts it to identify the lease holder."""
    return f"{prefix}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def resolve_handler(runtime: Runtime, kind: str) -> JobHandler:
    """The handler a backend registered for `kind` (see `backends.plugin`)."""
    handler = runtime.job_handlers.get(kind)
    if handler is None:
        raise UnknownJobKind(f"Unknown job kind {kind!r}: no backend registers a handler for it")
    return handler


class _Heartbeat:
    """Extends the job's lease every third of it while the handler runs.

    Without it a handler slower than the lease (a real LLM call under load) would be
    re-claimed by another worker while still running, and run twice.
    """

    def __init__(self, runtime: Runtime, job_id: int, worker_id: str) -> None:
        self._runtime = runtime
        self._job_id = job_id
        self._worker_id = worker_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{job_id}", daemon=True)

    def _beat(self) -> None:
        lease = self._runtime.settings.job_lease_seconds
        while not self._stop.wait(lease / 3):
            try:
                if not queue.extend_lease(self._runtime.engine, self._job_id, self._worker_id, self._runtime.clock, lease):
                    log.warning("job %d: lease lost while running", self._job_id)
                    return
            except Exception as error:  # noqa: BLE001 - a missed beat is retried at the next one
                log.warning("job %d: lease heartbeat failed (%s)", self._job_id, type(error).__name__)

    def __enter__(self) -> "_Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_job(runtime: Runtime, job: Job, worker_id: str) -> str | None:
    """Run one claimed job and record done / queued (retry) / dead; returns that state.

    None means the job was no longer ours when we recorded the outcome: another worker
    took it over after our lease ran out (its result stands), or erasure deleted it.
    """
    job_id = int(job.id)  # type: ignore[arg-type]
    started = time.perf_counter()
    try:
        handler = resolve_handler(runtime, job.kind)
    except UnknownJobKind as error:
        log.error("job %d %s: unknown kind, dead-lettered", job_id, job.kind)
        return queue.fail(runtime.engine, job_id, worker_id, str(error), runtime.clock, permanent=True)
    try:
        with _Heartbeat(runtime, job_id, worker_id):
            result = handler(runtime, dict(job.payload), job_id)
        if result is not None and not isinstance(result, dict):
            raise TypeError(f"handler returned {type(result).__name__}, expected dict or None")
        state = "done" if queue.complete(runtime.engine, job_id, worker_id, result, runtime.clock) else None
    except Exception as error:  # noqa: BLE001 - any handler error is a failed attempt
        # Stored and shown on the Jobs page: without the SQL and its parameters (the user's text).
        state = queue.fail(runtime.engine, job_id, worker_id, error_summary(error), runtime.clock)
        log.warning(
            "job %d %s failed (%s), attempt %d/%d -> %s",
            job_id, job.kind, type(error).__name__, job.attempts, job.max_attempts, state,
        )
        return state
    elapsed_ms = (time.perf_counter() - started) * 1000
    if state is None:
        log.warning("job %d %s finished but is no longer ours (lease taken over, or job erased)", job_id, job.kind)
    else:
        log.info("job %d %s done in %.0f ms (attempt %d)", job_id, job.kind, elapsed_ms, job.attempts)
    return state


def run_once(
    runtime: Runtime,
    worker_id: str,
    *,
    user_id: str | None = None,
    kinds: Sequence[str] | None = None,
) -> int:
    """Claim one ready job and run it; returns how many ran (0 when nothing was ready)."""
    jobs = queue.claim(
        runtime.engine, worker_id, runtime.clock, runtime.settings.job_lease_seconds, limit=1, user_id=user_id, kinds=kinds
    )
    for job in jobs:
        run_job(runtime, job, worker_id)
    return len(jobs)


def run_until_idle(
    runtime: Runtime,
    worker_id: str,
    *,
    user_id: str | None = None,
    kinds: Sequence[str] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    max_seconds: float | None = None,
) -> int:
    """Run ready jobs one by one until none is ready, `should_stop()` or the time budget."""
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    ran = 0
    while not should_stop() and (deadline is None or time.monotonic() < deadline):
        if run_once(runtime, worker_id, user_id=user_id, kinds=kinds) == 0:
            break
        ran += 1
    return ran


def drain(
    runtime: Runtime,
    user_id: str | None = None,
    max_seconds: float = 60.0,
    *,
    kinds: Sequence[str] | None = None,
    wait_for_running: bool = True,
) -> int:
    """Run every ready job now, in this process, until none is ready; returns how many ran.

    With `user_id`, only that user's jobs (others are left to the workers). With
    `wait_for_running`, also wait (up to `max_seconds`) for jobs another worker holds under
    a live lease, e.g. the lab's scheduler thread, so the caller sees their effects. Jobs
    waiting out a retry backoff are not ready and are not waited for.
    """
    worker_id = new_worker_id("drain")
    deadline = time.monotonic() + max_seconds
    ran = 0
    run = lambda: run_until_idle(  # noqa: E731
        runtime, worker_id, user_id=user_id, kinds=kinds, max_seconds=max(deadline - time.monotonic(), 0)
    )
    while time.monotonic() < deadline:
        ran += run()
        if not wait_for_running:
            break
        if queue.leased_count(runtime.engine, user_id=user_id, kinds=kinds) == 0:
            # A lease may have run out between our claim and the count: look once more.
            last = run()
            ran += last
            if last == 0:
                break
            continue
        time.sleep(DRAIN_POLL_SECONDS)
    return ran


"""APScheduler as a trigger only: poll the durable queue, call periodic hooks, enqueue sweeps.

APScheduler keeps its jobs in memory here, on purpose: a shared APScheduler job store
runs a job twice across processes and loses a job killed mid-run (DESIGN.md). So its
jobs only *trigger*: the poll runs whatever the `jobs` table says is ready, the hooks
enqueue work, and the nightly cron enqueues a `sweep` job. Every process (the lab via
`st.cache_resource`, each `python -m worker`) runs its own scheduler; the table
decides who does what.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Protocol

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import STATE_STOPPED, BaseScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from backends.plugin import PeriodicHook
from jobs import queue
from jobs.runner import JobRuntime, new_worker_id, run_until_idle
from jobs.sweep import SWEEP_KIND

log = logging.getLogger(__name__)

POLL_JOB_ID = "poll-queue"
SWEEP_JOB_ID = "nightly-sweep"
HOOK_JOB_PREFIX = "hook:"

HOOK_INTERVAL_SECONDS = 30.0
"""How often periodic hooks run: they look for idle sessions measured in minutes."""



class Runtime(JobRuntime, Protocol):
    @property
    def periodic_hooks(self) -> Mapping[str, PeriodicHook]: ...


def enqueue_sweep(runtime: Runtime) -> int:
    """"Run the sweep now": enqueue a `sweep` job (or return the one already pending)."""
    return queue.enqueue_unique(runtime.engine, SWEEP_KIND, {}, runtime.clock)


def poll_queue(
    runtime: Runtime, worker_id: str, should_stop: Callable[[], bool] = lambda: False, kinds: Sequence[str] | None = None
) -> int:
    """One poll tick: run ready jobs until none is ready (or the scheduler stops).

    A database error (server restarting, connection dropped) ends the tick, logged by type
    only (SQL errors quote their parameters, which can be user text); the next tick
    retries, and a job caught mid-way is re-claimed when its lease runs out.
    """
    try:
        return run_until_idle(runtime, worker_id, kinds=kinds, should_stop=should_stop)
    except Exception as error:  # noqa: BLE001 - the loop must outlive a database hiccup
        log.error("queue poll by %s failed (%s); retrying at the next tick", worker_id, type(error).__name__)
        return 0


def _run_hook(path: str, hook: PeriodicHook, runtime: Runtime) -> None:
    """Call a hook; its failure is logged (type only: messages may quote user data) and retried next time."""
    try:
        hook(runtime)
    except Exception as error:  # noqa: BLE001 - the next tick tries again
        log.warning("periodic hook %s failed (%s)", path, type(error).__name__)


def add_periodic_jobs(
    scheduler: BaseScheduler,
    runtime: Runtime,
    *,
    worker_id: str | None = None,
    poll: bool = True,
    hook_seconds: float | None = None,
    kinds: Sequence[str] | None = None,
) -> None:
    """Register the poll, the hooks and the nightly sweep on any APScheduler scheduler.

    Every job is `max_instances=1, coalesce=True`: a slow tick is never run twice at once,
    and ticks missed while busy collapse into one.
    """
    common = {"max_instances": 1, "coalesce": True, "replace_existing": True}
    if poll:
        worker_id = worker_id or new_worker_id("scheduler")
        stopped = lambda: scheduler.state == STATE_STOPPED  # noqa: E731 - finish the current job, then stop
        scheduler.add_job(
            poll_queue,
            IntervalTrigger(seconds=runtime.settings.job_poll_seconds),
            args=[runtime, worker_id, stopped, kinds],
            id=POLL_JOB_ID,
            name="run ready jobs",
            next_run_time=datetime.now(timezone.utc),  # jobs left from a previous run start at once
            **common,
        )
    for path, hook in runtime.periodic_hooks.items():
        scheduler.add_job(
            _run_hook,
            IntervalTrigger(seconds=hook_seconds or HOOK_INTERVAL_SECONDS),
            args=[path, hook, runtime],
            id=HOOK_JOB_PREFIX + path,
            name=f"periodic hook {path}",
            **common,
        )
    scheduler.add_job(
        enqueue_sweep,
        CronTrigger(hour=runtime.settings.sweep_cron_hour, minute=0, timezone=timezone.utc),
        args=[runtime],
        id=SWEEP_JOB_ID,
        name="enqueue the nightly sweep",
        misfire_grace_time=3600,
        **common,
    )


def start_scheduler(
    runtime: Runtime, *, hook_seconds: float | None = None, kinds: Sequence[str] | None = None
) -> BackgroundScheduler:
    """Start the per-process scheduler thread; call `scheduler.shutdown()` to stop it.

    The lab starts exactly one per server process (`st.cache_resource`). `kinds` limits
    the poll to some job kinds (dedicated workers, tests).
    """
    # APScheduler logs every execution at INFO: with a poll every few seconds, that floods the log.
    logging.getLogger("apscheduler.executors.default").setLevel(logging.WARNING)
    scheduler = BackgroundScheduler(timezone=timezone.utc)
    add_periodic_jobs(scheduler, runtime, hook_seconds=hook_seconds, kinds=kinds)
    scheduler.start()
    log.info("scheduler started: %s", ", ".join(sorted(next_run_times(scheduler))))
    return scheduler


def next_run_times(scheduler: BaseScheduler) -> dict[str, datetime]:
    """APScheduler job id -> next fire time (UTC), for the Jobs page; paused jobs are left out."""
    times = {job.id: getattr(job, "next_run_time", None) for job in scheduler.get_jobs()}
    return {job_id: when for job_id, when in times.items() if when is not None}

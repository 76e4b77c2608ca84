"""The nightly sweep job: every backend's forgetting work, plus trimming the queue itself.

It runs as a queued job (kind `sweep`) rather than inside APScheduler's cron callback, so
it gets the queue's lease, retries and dead letter, and runs once however many processes
fired the cron. Backends are independent: one that fails is recorded in the result and
the others still sweep.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from backends.registry import backend_names, build_backend
from backends.services import Services
from jobs import queue

log = logging.getLogger(__name__)

SWEEP_KIND = "sweep"

DONE_JOB_RETENTION = timedelta(days=7)
"""Finished jobs are kept a week for the Jobs page, then deleted (their payloads hold user text)."""


def sweep_backend(runtime: Services, name: str) -> dict[str, Any]:
    """One backend's sweep counts, or {"error": ...} when building or sweeping it failed."""
    try:
        return dict(build_backend(name, runtime).sweep())
    except Exception as error:  # noqa: BLE001 - recorded; the other backends still run
        log.warning("sweep of backend %s failed (%s)", name, type(error).__name__)
        return {"error": f"{type(error).__name__}: {error}"[: queue.MAX_ERROR_CHARS]}


def run_sweep(runtime: Services, payload: dict[str, Any], job_id: int) -> dict[str, Any]:
    """Job handler: sweep every installed backend and purge old finished jobs; returns counts.

    Succeeds even when a backend fails (its error is in the result): retrying the whole
    sweep would redo the healthy backends' work for the sake of a broken one, which the
    next night's sweep retries anyway.
    """
    backends = {name: sweep_backend(runtime, name) for name in backend_names()}
    purged = queue.purge_done(runtime.engine, DONE_JOB_RETENTION, runtime.clock)
    failed = sorted(name for name, counts in backends.items() if "error" in counts)
    return {"backends": backends, "jobs_purged": purged, "failed_backends": failed}

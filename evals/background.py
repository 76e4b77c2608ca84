"""Finishing a turn's background work before the next eval step.

The case format promises that a `say` step's background jobs (extraction, Mem0 add) are
done before the next step, so an eval measures what was stored, not how fast the queue
is. The in-process drain belongs to the job queue (`jobs.runner.drain`); until it is in
the checkout, a turn that queued jobs is an error rather than a silently wrong score.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from runtime import Runtime

Drain = Callable[..., Any]


class BackgroundUnavailable(RuntimeError):
    """A backend queued jobs but the job runner that would finish them is not present."""


def find_drain() -> Drain | None:
    try:
        module = importlib.import_module("jobs.runner")
    except ModuleNotFoundError as error:
        if error.name not in ("jobs.runner", "jobs"):
            raise  # jobs.runner exists but one of its imports is broken: say so
        return None
    return getattr(module, "drain", None)


def finish_jobs(runtime: Runtime, user_id: str | None, job_ids: list[int]) -> None:
    """Run queued jobs in-process; an error when jobs were queued and nothing can run them."""
    drain = find_drain()
    if drain is None:
        if job_ids:
            raise BackgroundUnavailable(
                f"the backend queued jobs {job_ids} but jobs.runner.drain is not available to run them"
            )
        return
    drain(runtime, user_id=user_id)

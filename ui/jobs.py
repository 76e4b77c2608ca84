"""The job queue as the Jobs page shows it. Rows show no payloads (ids only, by design)."""

from __future__ import annotations

from typing import Any



def job_row(job: Any) -> dict[str, Any]:
    """A job without its payload: kind, state, attempts, error, times."""
    return {
        "id": job.id,
        "kind": job.kind,
        "state": job.state,
        "attempts": f"{job.attempts}/{job.max_attempts}",
        "last error": (job.last_error or "")[:300],
        "created": f"{job.created_at:%Y-%m-%d %H:%M:%S}",
        "finished": f"{job.finished_at:%Y-%m-%d %H:%M:%S}" if job.finished_at else "",
    }


def visible_to(user_id: str, job: Any) -> bool:
    """The session's user sees their own jobs and the lab's system jobs (no user)."""
    return job.user_id is None or job.user_id == user_id

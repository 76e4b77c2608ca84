"""The durable job queue: rows of the `jobs` table, claimed with a lease.

Why a table and not APScheduler's job store: two processes sharing an APScheduler store
run a job twice, and a job killed mid-run is lost (see DESIGN.md). Here a worker claims
rows with `FOR UPDATE SKIP LOCKED`, so concurrent workers never pick the same row, and
holds them under a lease: a worker that dies leaves its job `running` with a lease that
runs out, after which any worker re-claims it. Failures retry with exponential backoff
and end as dead letters that keep the last error for a person to read.

Two time bases, on purpose:
- Scheduling (`run_after`, backoff, retention) reads the injected `Clock`, so tests and
  the evals step through backoff without sleeping.
- Leases read the database server's clock (`now()`): a lease says whether a real process
  is still alive, and the lab can advance its own process clock by days. Were leases on
  that clock, a lab that advanced time would see every other worker's lease as expired
  and run their jobs a second time.
A job enqueued to run at once (`run_after == created_at`) is ready for every process,
whatever its clock offset, so a worker on real time runs jobs a time-travelled lab queued.

The queue guarantees at-least-once execution; exactly-once *effects* are the handler's
job, with a guard row written in the same transaction as its writes (`memory_jobs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, Select, case, delete, func, select, text, update
from sqlmodel import Session

from clock import Clock, clock as process_clock
from db.models import JOB_STATES, Job
from db.tombstones import lock_user
from settings import get_settings

BACKOFF_BASE_SECONDS = 10.0
"""Delay before the first retry; it doubles with every failed attempt."""

BACKOFF_CAP_SECONDS = 3600.0
"""No retry waits longer than an hour: a job that fails for a day dead-letters anyway."""

MAX_ERROR_CHARS = 4000
"""Errors are stored for a person to read; a multi-megabyte traceback helps nobody."""


def backoff_seconds(attempts: int) -> float:
    """Delay before the next try after `attempts` failed attempts: base * 2^(n-1), capped."""
    exponent = max(attempts - 1, 0)
    if exponent >= 32:  # 2**32 * base is far past any cap; avoid float overflow on silly inputs
        return BACKOFF_CAP_SECONDS
    return min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**exponent)


def enqueue(
    engine: Engine,
    kind: str,
    payload: dict[str, Any],
    user_id: str | None = None,
    clock: Clock = process_clock,
    max_attempts: int | None = None,
    run_after: datetime | None = None,
) -> int:
    """Insert one queued job and return its id.

    `payload` must be JSON-serialisable (it is a JSONB column); it may hold user text, so
    pass `user_id` whenever the job is about a user: erasure deletes jobs by user.
    """
    job = _new_job(kind, payload, user_id, clock, max_attempts, run_after)
    with Session(engine) as session:
        if user_id is not None:
            lock_user(session, user_id)  # an erased user gets no job (UserErased), not a foreign-key error
        session.add(job)
        session.commit()
        return int(job.id)  # type: ignore[arg-type]


def enqueue_unique(engine: Engine, kind: str, payload: dict[str, Any], clock: Clock = process_clock) -> int:
    """Enqueue a job of `kind` unless one is already queued or running; returns either id.

    For system-wide work triggered by every process's scheduler (the nightly sweep): two
    lab processes firing the same cron enqueue one job, serialised by an advisory lock.
    """
    with Session(engine) as session:
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"jobs.unique:{kind}"})
        existing = session.scalar(select(Job.id).where(Job.kind == kind, Job.state.in_(("queued", "running"))).limit(1))
        if existing is not None:
            return int(existing)
        job = _new_job(kind, payload, None, clock, None, None)
        session.add(job)
        session.commit()
        return int(job.id)  # type: ignore[arg-type]


def _new_job(
    kind: str,
    payload: dict[str, Any],
    user_id: str | None,
    clock: Clock,
    max_attempts: int | None,
    run_after: datetime | None,
) -> Job:
    now = clock.now()
    return Job(
        kind=kind,
        user_id=user_id,
        payload=payload,
        max_attempts=max_attempts or get_settings().job_max_attempts,
        run_after=run_after or now,
        created_at=now,
        updated_at=now,
    )


def _filtered(statement: Select, user_id: str | None, kinds: Sequence[str] | None) -> Select:
    """Narrow a claim to one user's jobs or some kinds (drain for a user; per-kind workers)."""
    if user_id is not None:
        statement = statement.where(Job.user_id == user_id)
    if kinds:
        statement = statement.where(Job.kind.in_(list(kinds)))
    return statement


ASYNC_COMMIT = text("SET LOCAL synchronous_commit = off")
"""For the queue's own bookkeeping (claim, heartbeat, complete, fail), not for enqueue or
erasure. Losing the last few hundred ms of these on a server crash only re-runs a job,
which at-least-once already allows (handlers are idempotent); it saves a WAL flush per
statement, measured at 7-9 ms -> 1.5 ms per one-row update on this machine."""


def _lease_expired():  # noqa: ANN202 - a SQL expression
    return (Job.state == "running") & (Job.lease_until < func.now())


def _lease_for(lease_seconds: float | None):  # noqa: ANN202 - a SQL expression
    """The end of a lease starting now, on the database server's clock."""
    seconds = lease_seconds if lease_seconds is not None else get_settings().job_lease_seconds
    return func.now() + timedelta(seconds=seconds)


def _dead_letter_exhausted(session: Session, now: datetime, user_id: str | None, kinds: Sequence[str] | None) -> None:
    """A job whose worker died on its last allowed attempt must not run again: dead-letter it."""
    stale = _filtered(
        select(Job.id).where(_lease_expired(), Job.attempts >= Job.max_attempts), user_id, kinds
    ).with_for_update(skip_locked=True)
    session.execute(
        update(Job)
        .where(Job.id.in_(stale.scalar_subquery()))
        .values(
            state="dead",
            last_error=func.concat("lease of ", Job.locked_by, " expired on the last attempt (worker died?)"),
            lease_until=None,
            finished_at=now,
            updated_at=now,
        )
        .execution_options(synchronize_session=False)
    )


def claim(
    engine: Engine,
    worker_id: str,
    clock: Clock = process_clock,
    lease_seconds: float | None = None,
    limit: int = 1,
    *,
    user_id: str | None = None,
    kinds: Sequence[str] | None = None,
) -> list[Job]:
    """Lease up to `limit` ready jobs to `worker_id`; attempts are counted here.

    Ready means queued with `run_after` reached (or enqueued to run at once), or running
    with an expired lease (its worker died). The candidate rows are picked in a CTE with FOR UPDATE
    SKIP LOCKED, so two workers claiming at once get disjoint rows without waiting for each other.
    """
    now = clock.now()
    ready = (
        Job.state.in_(("queued", "running"))  # the partial index `jobs_claimable`
        & ((Job.run_after <= now) | (Job.run_after <= Job.created_at))
        & ((Job.state == "queued") | ((Job.lease_until < func.now()) & (Job.attempts < Job.max_attempts)))
    )
    with Session(engine, expire_on_commit=False) as session:
        session.execute(ASYNC_COMMIT)
        picked = (
            _filtered(select(Job.id).where(ready), user_id, kinds)
            .order_by(Job.run_after, Job.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
            .cte("picked")
        )
        claimed = session.scalars(
            update(Job)
            .where(Job.id == picked.c.id)
            .values(
                state="running",
                attempts=Job.attempts + 1,
                locked_by=worker_id,
                lease_until=_lease_for(lease_seconds),
                updated_at=now,
                # Say why a running job was taken over, for the Jobs page.
                last_error=case(
                    (Job.state == "running", func.concat("lease of ", Job.locked_by, " expired")),
                    else_=Job.last_error,
                ),
            )
            .returning(Job)
            .execution_options(synchronize_session=False)
        ).all()
        if len(claimed) < limit:  # idle: tidy up, off the busy path (it costs a statement)
            _dead_letter_exhausted(session, now, user_id, kinds)
        session.commit()
    return sorted(claimed, key=lambda job: (job.run_after, job.id))


def extend_lease(
    engine: Engine, job_id: int, worker_id: str, clock: Clock = process_clock, lease_seconds: float | None = None
) -> bool:
    """Heartbeat: push the lease forward while a long handler runs; False if the job was lost."""
    with engine.begin() as connection:
        connection.execute(ASYNC_COMMIT)
        updated = connection.execute(
            update(Job)
            .where(Job.id == job_id, Job.state == "running", Job.locked_by == worker_id)
            .values(lease_until=_lease_for(lease_seconds), updated_at=clock.now())
        ).rowcount
    return updated == 1


def complete(
    engine: Engine, job_id: int, worker_id: str, result: dict[str, Any] | None = None, clock: Clock = process_clock
) -> bool:
    """Mark the job done, only if `worker_id` still holds it (else another worker took it over)."""
    now = clock.now()
    with engine.begin() as connection:
        connection.execute(ASYNC_COMMIT)
        updated = connection.execute(
            update(Job)
            .where(Job.id == job_id, Job.state == "running", Job.locked_by == worker_id)
            .values(state="done", result=result, lease_until=None, finished_at=now, updated_at=now)
        ).rowcount
    return updated == 1


def fail(
    engine: Engine,
    job_id: int,
    worker_id: str,
    error: str,
    clock: Clock = process_clock,
    *,
    permanent: bool = False,
) -> str | None:
    """Record a failed attempt: requeue with backoff, or dead-letter when attempts are used up.

    `permanent` dead-letters at once (e.g. an unknown kind: retrying cannot help).
    Returns the new state, or None when the worker no longer holds the job.
    """
    now = clock.now()
    error = error[:MAX_ERROR_CHARS]
    with Session(engine) as session:
        session.execute(ASYNC_COMMIT)
        job = session.scalars(
            select(Job).where(Job.id == job_id, Job.state == "running", Job.locked_by == worker_id).with_for_update()
        ).first()
        if job is None:
            return None
        job.last_error = error
        job.lease_until = None
        job.updated_at = now
        if permanent or job.attempts >= job.max_attempts:
            job.state = "dead"
            job.finished_at = now
        else:
            job.state = "queued"
            job.run_after = now + timedelta(seconds=backoff_seconds(job.attempts))
        session.add(job)
        session.commit()
        return job.state


def retry_dead(engine: Engine, job_id: int, clock: Clock = process_clock) -> bool:
    """Give a dead letter a fresh set of attempts, now; its last error stays until it runs."""
    now = clock.now()
    with engine.begin() as connection:
        updated = connection.execute(
            update(Job)
            .where(Job.id == job_id, Job.state == "dead")
            .values(state="queued", attempts=0, run_after=now, lease_until=None, finished_at=None, updated_at=now)
        ).rowcount
    return updated == 1


def counts_by_state(engine: Engine) -> dict[str, int]:
    """Jobs per state, every state present (zeros included) so the Jobs page has fixed columns."""
    with Session(engine) as session:
        rows = session.execute(select(Job.state, func.count()).group_by(Job.state)).all()
    counts = dict.fromkeys(JOB_STATES, 0)
    counts.update({state: int(count) for state, count in rows})
    return counts


def recent_jobs(engine: Engine, limit: int = 50, user_id: str | None = None) -> list[Job]:
    """The newest jobs first (one user's when given)."""
    statement = select(Job).order_by(Job.id.desc()).limit(limit)
    if user_id is not None:
        statement = statement.where(Job.user_id == user_id)
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(statement))


def dead_letters(engine: Engine, limit: int = 100) -> list[Job]:
    """Jobs that used up their attempts, newest failure first."""
    with Session(engine, expire_on_commit=False) as session:
        return list(session.scalars(select(Job).where(Job.state == "dead").order_by(Job.updated_at.desc()).limit(limit)))


def get_job(engine: Engine, job_id: int) -> Job | None:
    with Session(engine, expire_on_commit=False) as session:
        return session.get(Job, job_id)


def pending_count(engine: Engine, user_id: str | None = None, kinds: Sequence[str] | None = None) -> int:
    """Jobs not finished yet (queued or running), for "wait until background work is done"."""
    statement = _filtered(select(func.count()).select_from(Job).where(Job.state.in_(("queued", "running"))), user_id, kinds)
    with Session(engine) as session:
        return int(session.scalar(statement) or 0)


def leased_count(engine: Engine, *, user_id: str | None = None, kinds: Sequence[str] | None = None) -> int:
    """Jobs running under a lease that has not run out (someone is working on them now)."""
    statement = _filtered(
        select(func.count()).select_from(Job).where(Job.state == "running", Job.lease_until >= func.now()), user_id, kinds
    )
    with Session(engine) as session:
        return int(session.scalar(statement) or 0)


def delete_user_jobs(engine: Engine, user_id: str) -> int:
    """Erasure: hard-delete every job of the user, whatever its state (payloads hold user text)."""
    with engine.begin() as connection:  # synchronous commit: an erasure must survive a crash
        return connection.execute(delete(Job).where(Job.user_id == user_id)).rowcount


def purge_done(engine: Engine, older_than: timedelta, clock: Clock = process_clock) -> int:
    """Delete finished jobs older than `older_than` (dead letters stay for a person to read)."""
    cutoff = clock.now() - older_than
    with engine.begin() as connection:
        return connection.execute(delete(Job).where(Job.state == "done", Job.finished_at < cutoff)).rowcount


__all__ = [
    "BACKOFF_BASE_SECONDS",
    "BACKOFF_CAP_SECONDS",
    "backoff_seconds",
    "claim",
    "complete",
    "counts_by_state",
    "dead_letters",
    "delete_user_jobs",
    "enqueue",
    "enqueue_unique",
    "extend_lease",
    "fail",
    "get_job",
    "leased_count",
    "pending_count",
    "purge_done",
    "recent_jobs",
    "retry_dead",
]

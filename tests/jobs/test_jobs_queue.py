"""The queue on the real embedded Postgres, with an injected clock (no sleeping).

Each test works on a fresh user's jobs and claims with `user_id=`, so leftovers of other
tests sharing the database never interfere.
"""

from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import text

from clock import Clock
from jobs import queue

LEASE = 30.0
SHORT_LEASE = 0.5


def test_enqueue_claim_complete(engine, user_id, test_clock: Clock) -> None:
    job_id = queue.enqueue(engine, "test.record", {"n": 1}, user_id=user_id, clock=test_clock, max_attempts=3)
    now = test_clock.now()

    [job] = queue.claim(engine, "w1", test_clock, LEASE, user_id=user_id)
    assert (job.id, job.state, job.attempts, job.locked_by) == (job_id, "running", 1, "w1")
    assert job.payload == {"n": 1}
    assert abs((job.lease_until - now).total_seconds() - LEASE) < 1.0
    assert queue.claim(engine, "w2", test_clock, LEASE, user_id=user_id) == []  # leased: not claimable

    assert queue.complete(engine, job_id, "w2", {"x": 1}, test_clock) is False  # not w2's job
    assert queue.complete(engine, job_id, "w1", {"x": 1}, test_clock) is True
    done = queue.get_job(engine, job_id)
    assert (done.state, done.result, done.attempts, done.lease_until) == ("done", {"x": 1}, 1, None)
    assert done.finished_at is not None
    assert queue.complete(engine, job_id, "w1", {"x": 2}, test_clock) is False  # only once
    assert queue.claim(engine, "w2", test_clock, LEASE, user_id=user_id) == []


def test_claim_respects_run_after_order_and_limit(engine, user_id, test_clock: Clock) -> None:
    later = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock, run_after=test_clock.now() + timedelta(hours=1))
    first = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)
    second = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)

    claimed = queue.claim(engine, "w", test_clock, LEASE, limit=5, user_id=user_id)
    assert [job.id for job in claimed] == [first, second]
    for job in claimed:
        assert queue.complete(engine, job.id, "w", None, test_clock)
    test_clock.advance(seconds=3601)
    assert [job.id for job in queue.claim(engine, "w", test_clock, LEASE, limit=5, user_id=user_id)] == [later]


def test_claim_filters_by_kind(engine, user_id, test_clock: Clock) -> None:
    a = queue.enqueue(engine, "kind.a", {}, user_id=user_id, clock=test_clock)
    b = queue.enqueue(engine, "kind.b", {}, user_id=user_id, clock=test_clock)
    assert [job.id for job in queue.claim(engine, "w", test_clock, LEASE, limit=5, user_id=user_id, kinds=["kind.b"])] == [b]
    assert [job.id for job in queue.claim(engine, "w", test_clock, LEASE, limit=5, user_id=user_id)] == [a]


def test_backoff_doubles_and_is_capped() -> None:
    base = queue.BACKOFF_BASE_SECONDS
    assert [queue.backoff_seconds(n) for n in (1, 2, 3, 4)] == [base, 2 * base, 4 * base, 8 * base]
    assert queue.backoff_seconds(40) == queue.BACKOFF_CAP_SECONDS
    assert queue.backoff_seconds(1000) == queue.BACKOFF_CAP_SECONDS


def test_failed_job_waits_out_its_backoff(engine, user_id, test_clock: Clock) -> None:
    job_id = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock, max_attempts=5)
    base = queue.BACKOFF_BASE_SECONDS

    for attempt in (1, 2, 3):
        [job] = queue.claim(engine, "w", test_clock, LEASE, user_id=user_id)
        assert job.attempts == attempt
        failed_at = test_clock.now()
        assert queue.fail(engine, job_id, "w", f"error {attempt}", test_clock) == "queued"
        stored = queue.get_job(engine, job_id)
        delay = base * 2 ** (attempt - 1)
        assert abs((stored.run_after - failed_at).total_seconds() - delay) < 1.0
        assert stored.last_error == f"error {attempt}" and stored.lease_until is None
        test_clock.advance(seconds=delay - 2)
        assert queue.claim(engine, "w", test_clock, LEASE, user_id=user_id) == []  # still backing off
        test_clock.advance(seconds=3)


def test_dead_letter_after_max_attempts_keeps_last_error_and_retry(engine, user_id, test_clock: Clock) -> None:
    job_id = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock, max_attempts=3)
    states = []
    for attempt in (1, 2, 3):
        [job] = queue.claim(engine, "w", test_clock, LEASE, user_id=user_id)
        states.append(queue.fail(engine, job.id, "w", f"error on attempt {attempt}", test_clock))
        test_clock.advance(seconds=queue.BACKOFF_CAP_SECONDS + 1)
    assert states == ["queued", "queued", "dead"]

    dead = queue.get_job(engine, job_id)
    assert (dead.state, dead.attempts, dead.last_error) == ("dead", 3, "error on attempt 3")
    assert job_id in [job.id for job in queue.dead_letters(engine)]
    assert queue.claim(engine, "w", test_clock, LEASE, user_id=user_id) == []  # dead letters never run

    assert queue.retry_dead(engine, job_id, test_clock) is True
    assert queue.retry_dead(engine, job_id, test_clock) is False  # no longer dead
    [again] = queue.claim(engine, "w", test_clock, LEASE, user_id=user_id)
    assert (again.id, again.attempts) == (job_id, 1)
    assert queue.complete(engine, job_id, "w", None, test_clock)
    assert job_id not in [job.id for job in queue.dead_letters(engine)]


def test_permanent_failure_dead_letters_at_once(engine, user_id, test_clock: Clock) -> None:
    job_id = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock, max_attempts=5)
    queue.claim(engine, "w", test_clock, LEASE, user_id=user_id)
    assert queue.fail(engine, job_id, "someone-else", "x", test_clock) is None  # not the lease holder
    assert queue.fail(engine, job_id, "w", "no handler", test_clock, permanent=True) == "dead"
    assert queue.get_job(engine, job_id).attempts == 1


def test_expired_lease_is_reclaimed_and_old_holder_cannot_complete(engine, user_id, test_clock: Clock) -> None:
    """Leases run on the database's clock (real time), so this one waits a short lease out."""
    job_id = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)
    queue.claim(engine, "dying", test_clock, SHORT_LEASE, user_id=user_id)

    test_clock.advance(days=30)  # a time-travelling process must not steal a live lease
    assert queue.claim(engine, "other", test_clock, LEASE, user_id=user_id) == []
    time.sleep(SHORT_LEASE + 0.2)
    [job] = queue.claim(engine, "other", test_clock, LEASE, user_id=user_id)
    assert (job.id, job.attempts, job.locked_by) == (job_id, 2, "other")
    assert job.last_error == "lease of dying expired"

    assert queue.complete(engine, job_id, "dying", {"late": True}, test_clock) is False
    assert queue.complete(engine, job_id, "other", {"ok": True}, test_clock) is True
    assert queue.get_job(engine, job_id).result == {"ok": True}


def test_heartbeat_keeps_a_long_job(engine, user_id, test_clock: Clock) -> None:
    job_id = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)
    queue.claim(engine, "slow", test_clock, SHORT_LEASE, user_id=user_id)
    time.sleep(SHORT_LEASE * 0.6)
    assert queue.extend_lease(engine, job_id, "slow", test_clock, SHORT_LEASE) is True
    time.sleep(SHORT_LEASE * 0.6)  # past the first lease, inside the extended one
    assert queue.claim(engine, "other", test_clock, LEASE, user_id=user_id) == []
    assert queue.extend_lease(engine, job_id, "other", test_clock, LEASE) is False
    assert queue.leased_count(engine, user_id=user_id) == 1


def test_worker_dying_on_last_attempt_dead_letters(engine, user_id, test_clock: Clock) -> None:
    job_id = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock, max_attempts=1)
    queue.claim(engine, "dying", test_clock, SHORT_LEASE, user_id=user_id)
    time.sleep(SHORT_LEASE + 0.2)
    assert queue.leased_count(engine, user_id=user_id) == 0
    assert queue.claim(engine, "other", test_clock, LEASE, user_id=user_id) == []
    dead = queue.get_job(engine, job_id)
    assert (dead.state, dead.attempts) == ("dead", 1)
    assert "dying" in dead.last_error and "expired" in dead.last_error


def test_immediate_jobs_are_ready_whatever_the_clock_offset(engine, user_id, test_clock: Clock) -> None:
    """A lab that advanced its clock queues work a worker on real time must still run."""
    test_clock.advance(days=10)
    immediate = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)
    delayed = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock, run_after=test_clock.now() + timedelta(minutes=1))
    real_time = Clock()
    assert [job.id for job in queue.claim(engine, "w", real_time, LEASE, limit=5, user_id=user_id)] == [immediate]
    test_clock.advance(seconds=61)
    assert [job.id for job in queue.claim(engine, "w", test_clock, LEASE, limit=5, user_id=user_id)] == [delayed]


def test_counts_recent_and_user_deletion(engine, make_user, test_clock: Clock) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    before = queue.counts_by_state(engine)
    assert set(before) == {"queued", "running", "done", "dead"}
    alice_jobs = [queue.enqueue(engine, "k", {"text": f"alice {i}"}, user_id=alice, clock=test_clock) for i in range(3)]
    bob_job = queue.enqueue(engine, "k", {"text": "bob"}, user_id=bob, clock=test_clock)
    queue.claim(engine, "w", test_clock, LEASE, user_id=alice)

    after = queue.counts_by_state(engine)
    assert after["queued"] - before["queued"] == 3 and after["running"] - before["running"] == 1
    assert [job.id for job in queue.recent_jobs(engine, 10, user_id=alice)] == sorted(alice_jobs, reverse=True)
    assert queue.pending_count(engine, user_id=alice) == 3

    assert queue.delete_user_jobs(engine, alice) == 3  # the running one too
    with engine.connect() as connection:
        left = connection.execute(
            text("SELECT count(*) FROM jobs WHERE user_id = :u OR payload::text LIKE '%alice %'"), {"u": alice}
        ).scalar_one()
    assert left == 0
    assert [job.id for job in queue.recent_jobs(engine, 10, user_id=bob)] == [bob_job]


def test_enqueue_unique_returns_the_pending_job(engine, test_clock: Clock) -> None:
    kind = f"test.unique.{test_clock.now().timestamp()}"
    first = queue.enqueue_unique(engine, kind, {}, test_clock)
    assert queue.enqueue_unique(engine, kind, {}, test_clock) == first
    [job] = queue.claim(engine, "w", test_clock, LEASE, kinds=[kind])
    assert queue.enqueue_unique(engine, kind, {}, test_clock) == first  # running counts as pending
    queue.complete(engine, job.id, "w", None, test_clock)
    assert queue.enqueue_unique(engine, kind, {}, test_clock) != first


def test_purge_done_keeps_recent_and_unfinished(engine, user_id, test_clock: Clock) -> None:
    old = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)
    queue.claim(engine, "w", test_clock, LEASE, user_id=user_id)
    queue.complete(engine, old, "w", None, test_clock)
    test_clock.advance(days=8)
    recent = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)
    queue.claim(engine, "w", test_clock, LEASE, user_id=user_id)
    queue.complete(engine, recent, "w", None, test_clock)
    waiting = queue.enqueue(engine, "k", {}, user_id=user_id, clock=test_clock)

    assert queue.purge_done(engine, timedelta(days=7), test_clock) >= 1
    assert queue.get_job(engine, old) is None
    assert queue.get_job(engine, recent).state == "done"
    assert queue.get_job(engine, waiting).state == "queued"

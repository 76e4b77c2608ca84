"""Running jobs in-process: handlers, failures, unknown kinds, drain, idempotency, threads."""

from __future__ import annotations

import threading
import time
import uuid

from runtime import Runtime
from jobs import queue, runner
from tests.jobs.handlers import applications, guarded


def enqueue(runtime: Runtime, kind: str, user_id: str, **payload) -> int:
    return queue.enqueue(runtime.engine, kind, payload, user_id=user_id, clock=runtime.clock, max_attempts=3)


def test_run_once_runs_the_handler_and_stores_its_result(isolated_runtime, user_id, job_tables) -> None:
    job_id = enqueue(isolated_runtime, "test.record", user_id, n=7)
    assert runner.run_once(isolated_runtime, "w", user_id=user_id) == 1
    assert runner.run_once(isolated_runtime, "w", user_id=user_id) == 0
    job = queue.get_job(isolated_runtime.engine, job_id)
    assert (job.state, job.result["n"], job.attempts) == ("done", 7, 1)
    assert applications(isolated_runtime, [job_id]) == {job_id: 1}


def test_handler_exception_is_a_failed_attempt_not_a_crash(isolated_runtime, user_id) -> None:
    job_id = enqueue(isolated_runtime, "test.fail", user_id)
    assert runner.run_once(isolated_runtime, "w", user_id=user_id) == 1
    job = queue.get_job(isolated_runtime.engine, job_id)
    assert job.state == "queued"
    assert job.last_error == "RuntimeError: boom on attempt 1: "
    for attempt in (2, 3):  # through the backoff to the dead letter, with the last error kept
        isolated_runtime.clock.advance(seconds=queue.BACKOFF_CAP_SECONDS + 1)
        assert runner.run_once(isolated_runtime, "w", user_id=user_id) == 1
    job = queue.get_job(isolated_runtime.engine, job_id)
    assert (job.state, job.attempts, job.last_error) == ("dead", 3, "RuntimeError: boom on attempt 3: ")


def test_unknown_kind_dead_letters_at_once_with_a_clear_error(isolated_runtime, user_id) -> None:
    unknown = enqueue(isolated_runtime, "test.never-registered", user_id)
    assert runner.drain(isolated_runtime, user_id=user_id) == 1
    first = queue.get_job(isolated_runtime.engine, unknown)
    assert (first.state, first.attempts) == ("dead", 1)
    assert first.last_error == "Unknown job kind 'test.never-registered': no backend registers a handler for it"


def test_a_non_dict_result_is_a_failure(isolated_runtime, user_id) -> None:
    job_id = enqueue(isolated_runtime, "test.bad_result", user_id)
    runner.run_once(isolated_runtime, "w", user_id=user_id)
    job = queue.get_job(isolated_runtime.engine, job_id)
    assert job.state == "queued" and job.last_error.startswith("TypeError: handler returned list")


def test_drain_runs_one_users_ready_jobs_only(isolated_runtime, make_user, job_tables) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    alice_jobs = [enqueue(isolated_runtime, "test.record", alice, n=n) for n in range(3)]
    failing = enqueue(isolated_runtime, "test.fail", alice)
    bob_job = enqueue(isolated_runtime, "test.record", bob)

    assert runner.drain(isolated_runtime, user_id=alice, max_seconds=30) == 4  # the failure runs once, then backs off
    assert applications(isolated_runtime, alice_jobs + [bob_job]) == {job_id: 1 for job_id in alice_jobs}
    assert queue.get_job(isolated_runtime.engine, failing).state == "queued"
    assert queue.get_job(isolated_runtime.engine, bob_job).state == "queued"


def test_drain_waits_for_a_job_another_worker_is_running(isolated_runtime, user_id, job_tables) -> None:
    job_id = enqueue(isolated_runtime, "test.record", user_id, sleep=0.6)
    claimed = threading.Event()

    def scheduler_thread() -> None:
        [job] = queue.claim(isolated_runtime.engine, "scheduler", isolated_runtime.clock, 30, user_id=user_id)
        claimed.set()
        runner.run_job(isolated_runtime, job, "scheduler")

    thread = threading.Thread(target=scheduler_thread)
    thread.start()
    assert claimed.wait(10)
    assert runner.drain(isolated_runtime, user_id=user_id, max_seconds=20) == 0  # nothing for drain to run itself...
    assert queue.get_job(isolated_runtime.engine, job_id).state == "done"  # ...but it returned only once the job was done
    thread.join()


def test_guarded_job_run_again_after_commit_writes_once(isolated_runtime, user_id, job_tables) -> None:
    """A worker commits the handler's writes and dies before `complete`; the re-run stops at the guard."""
    payload = {"message_id": str(uuid.uuid4()), "user_id": user_id}
    job_id = queue.enqueue(isolated_runtime.engine, "test.guarded", payload, user_id=user_id, clock=isolated_runtime.clock)
    [job] = queue.claim(isolated_runtime.engine, "doomed", isolated_runtime.clock, 0.3, user_id=user_id)
    assert guarded(isolated_runtime, dict(job.payload), job_id) == {"applied": 1}  # committed; `complete` never called
    time.sleep(0.5)  # the doomed worker's lease runs out

    assert runner.drain(isolated_runtime, user_id=user_id) == 1
    job = queue.get_job(isolated_runtime.engine, job_id)
    assert (job.state, job.attempts, job.result) == ("done", 2, {"skipped": "already processed"})
    assert applications(isolated_runtime, [job_id]) == {job_id: 1}


def test_four_threads_never_run_a_job_twice(isolated_runtime, user_id, job_tables) -> None:
    """Each thread claims on its own pooled connection; SKIP LOCKED must hand out disjoint rows."""
    job_ids = [enqueue(isolated_runtime, "test.record", user_id, n=n) for n in range(200)]
    start = threading.Barrier(4)
    ran: dict[str, int] = {}

    def work(name: str) -> None:
        start.wait()
        ran[name] = runner.run_until_idle(isolated_runtime, f"thread-{name}", user_id=user_id)

    threads = [threading.Thread(target=work, args=(str(i),), name=f"worker-{i}") for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert applications(isolated_runtime, job_ids) == {job_id: 1 for job_id in job_ids}
    assert sum(ran.values()) == 200
    assert sum(1 for count in ran.values() if count > 0) >= 2, ran  # they really did run concurrently
    states = {queue.get_job(isolated_runtime.engine, job_id).state for job_id in job_ids}
    assert states == {"done"}


def test_a_job_erased_while_running_is_not_resurrected(isolated_runtime, user_id, job_tables) -> None:
    job_id = enqueue(isolated_runtime, "test.record", user_id)
    [job] = queue.claim(isolated_runtime.engine, "w", isolated_runtime.clock, 30, user_id=user_id)
    assert queue.delete_user_jobs(isolated_runtime.engine, user_id) == 1  # "delete all my data" mid-run
    assert runner.run_job(isolated_runtime, job, "w") is None
    assert queue.get_job(isolated_runtime.engine, job_id) is None

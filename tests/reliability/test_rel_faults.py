"""Every fault the offline model can inject, transient and persistent, in a chat turn and in
each backend's background job.

Jobs (custom.extract, mem0.add): a transient fault fails one attempt and the retry stores the
facts; a persistent one dead-letters the job (state 'dead', what the Jobs page lists) with no
guard row, so nothing is marked processed; retried once the model is back, it stores the
facts. Never `done` with the facts dropped; a genuine "nothing to store" still ends `done`.
Chat turns (every memory backend): a transient fault is retried by the SDK and the turn
answers; a persistent one gives a readable error and writes nothing, and the next turn works;
a cut reply is marked as cut.
"""

from __future__ import annotations

import time

import pytest

from backends.registry import build_backend
from jobs import queue
from jobs.runner import drain
from offline_model.faults import FAULT_NAMES
from offline_model.server import ensure_running
from runtime import Runtime
from tests.reliability.faults_support import (
    FACT, NOTHING, Figure, guard_rows, message_count, new_user, noted_events, small_runtime, turn, user_jobs,
)

pytestmark = pytest.mark.reliability

JOB_BACKENDS = ("custom", "mem0")
CHAT_BACKENDS = ("custom", "mem0", "memory_tool")
LLM_TIMEOUT = 0.5
FAULT_SECONDS = 1.0  # the timeout fault outlasts the client's timeout
MAX_ATTEMPTS = 3


@pytest.fixture()
def model_server():
    server = ensure_running()
    server.faults.clear()
    yield server
    server.faults.clear()


def _inject(server, fault: str, times: int | None) -> None:
    server.faults.inject(fault, times=times, seconds=FAULT_SECONDS, retry_after=0)


def _run_jobs(runtime: Runtime, user_id: str) -> None:
    """Run the user's jobs, stepping the clock over each retry's backoff, until none is pending."""
    for _ in range(MAX_ATTEMPTS + 2):
        drain(runtime, user_id=user_id, max_seconds=30)
        if queue.pending_count(runtime.engine, user_id=user_id) == 0:
            return
        runtime.clock.advance(seconds=queue.BACKOFF_CAP_SECONDS)


def _stored(backend, user_id: str) -> int:
    return len(backend.list_memories(user_id))


@pytest.mark.parametrize("backend_name", JOB_BACKENDS)
def test_job_faults_retry_or_dead_letter(runtime: Runtime, model_server, backend_name: str):
    # No SDK retries here, so every injected failure reaches the queue as a failed attempt.
    rt = small_runtime(runtime, llm_timeout_seconds=LLM_TIMEOUT, llm_max_retries=0, job_max_attempts=MAX_ATTEMPTS)
    backend = build_backend(backend_name, rt)
    figure = Figure(f"faults in the {backend_name} background job")
    for fault in FAULT_NAMES:
        for mode, times in (("transient", 1), ("persistent", None)):
            label = f"{fault}/{mode}"
            started = time.perf_counter()
            user = new_user(rt, "rel-fault")
            result = turn(backend, user, FACT)
            assert result.error is None, result.error
            _inject(model_server, fault, times)
            _run_jobs(rt, user)
            model_server.faults.clear()
            jobs = user_jobs(rt, user)
            states = [(job.state, job.attempts) for job in jobs]
            print(f"{backend_name} job {label}: {time.perf_counter() - started:.1f}s")
            if mode == "transient":
                figure.check(label + " ends done", [s for s, _ in states] == ["done"], states)
                figure.check(label + " retried", jobs[0].attempts == 2, states)
                figure.check(label + " stores the facts", _stored(backend, user) == 2, backend.stored_texts(user))
                figure.check(label + " writes the Noted event", len(noted_events(rt, user)) == 1, noted_events(rt, user))
                continue
            figure.check(label + " dead-lettered", states == [("dead", MAX_ATTEMPTS)], states)
            figure.check(label + " on the Jobs page", {j.id for j in jobs} <= {j.id for j in queue.dead_letters(rt.engine)}, states)
            figure.check(label + " stores nothing", _stored(backend, user) == 0, backend.stored_texts(user))
            figure.check(label + " leaves no guard row", guard_rows(rt, user) == 0, guard_rows(rt, user))
            # The dead letter is not lost work: retried once the model is back, it stores the facts.
            queue.retry_dead(rt.engine, jobs[0].id, rt.clock)
            _run_jobs(rt, user)
            figure.check(label + " retried from the dead letter", [j.state for j in user_jobs(rt, user)] == ["done"]
                         and _stored(backend, user) == 2, backend.stored_texts(user))
    # A genuine "nothing to store" is not a fault: done at once, nothing stored.
    user = new_user(rt, "rel-fault")
    assert turn(backend, user, NOTHING).error is None
    _run_jobs(rt, user)
    states = [(job.state, job.attempts) for job in user_jobs(rt, user)]
    figure.check("nothing to store ends done", states == [("done", 1)], states)
    figure.check("nothing to store stores nothing", _stored(backend, user) == 0, backend.stored_texts(user))
    figure.report()


@pytest.mark.parametrize("backend_name", CHAT_BACKENDS)
def test_chat_turn_faults(runtime: Runtime, model_server, backend_name: str):
    # The product's SDK retries (llm_max_retries default) are what makes a transient fault invisible.
    rt = small_runtime(runtime, llm_timeout_seconds=LLM_TIMEOUT, job_max_attempts=MAX_ATTEMPTS)
    backend = build_backend(backend_name, rt)
    figure = Figure(f"faults in a {backend_name} chat turn")
    for fault in FAULT_NAMES:
        for mode, times in (("transient", 1), ("persistent", None)):
            label = f"{fault}/{mode}"
            started = time.perf_counter()
            user = new_user(rt, "rel-chat")
            _inject(model_server, fault, times)
            try:
                result = turn(backend, user, FACT)
            except Exception as error:  # noqa: BLE001 - the figure counts it
                figure.check(label + " raises nothing", False, f"{type(error).__name__}: {str(error)[:200]}")
                model_server.faults.clear()
                continue
            finally:
                injected_left = model_server.faults.take() is not None
                model_server.faults.clear()
            written = message_count(rt, user)
            if fault == "max_tokens":
                figure.check(label + " answers", result.error is None and written >= 2, result.error)
                if mode == "persistent":  # every call cut, so the reply shown is cut
                    figure.check(label + " marks the cut reply", result.truncated, result.reply[:80])
            elif fault == "malformed_json":  # a plain-text reply has no JSON to break: it answers
                figure.check(label + " answers", result.error is None and written >= 2, result.error)
            elif mode == "transient":
                figure.check(label + " retried to an answer", result.error is None and written >= 2 and result.reply.strip(),
                             result.error)
            else:
                figure.check(label + " gives an error", bool(result.error) and "Traceback" not in result.error, result.error)
                figure.check(label + " writes nothing", written == 0 and not user_jobs(rt, user), (written, user_jobs(rt, user)))
            if mode == "transient":
                figure.check(label + " consumed the fault", not injected_left, "")
            if result.error:  # the conversation is not broken by the failed turn
                after = turn(backend, user, NOTHING)
                figure.check(label + " next turn works", after.error is None and after.reply.strip(), after.error)
            print(f"{backend_name} chat {label}: {time.perf_counter() - started:.1f}s")
    figure.report()

"""An erasure racing turns in flight: after "Delete all my data" returns, nothing of the user
exists, and a late turn (a column still answering, a stale tab) cannot re-create them.

Before the fix a turn in flight re-created the `users` row and stored 2 messages, a
conversation and a job after the erasure reported success.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from sqlalchemy import text

from backends.erasure import erase_user_everywhere
from backends.registry import build_backend
from jobs.runner import drain
from offline_model.server import ensure_running
from runtime import Runtime
from tests.reliability.faults_support import Figure, new_user, turn

pytestmark = pytest.mark.reliability

BACKENDS = ("custom", "mem0", "memory_tool")
MODEL_DELAY = 1.5
"""The offline model's `timeout` fault holds each answer this long (the client waits longer)."""
USER_TABLES = ("users", "conversations", "messages", "conversation_summaries", "memories", "memory_jobs", "jobs",
               "event_log", "memory_files")


def traces(runtime: Runtime, user_id: str, canary: str) -> dict[str, int]:
    """Rows of the user anywhere (by id or by the canary text), Mem0's collection included."""
    counts: dict[str, int] = {}
    with runtime.engine.connect() as connection:
        for table in USER_TABLES:
            column = "id" if table == "users" else "user_id"
            counts[table] = connection.execute(text(f"SELECT count(*) FROM {table} WHERE {column} = :u"), {"u": user_id}).scalar_one()
        counts["mem0_memories"] = connection.execute(
            text("SELECT count(*) FROM mem0_memories WHERE payload->>'user_id' = :u OR payload::text LIKE :c"),
            {"u": user_id, "c": f"%{canary}%"}).scalar_one()
        counts["canary_in_messages"] = connection.execute(
            text("SELECT count(*) FROM messages WHERE text LIKE :c"), {"c": f"%{canary}%"}).scalar_one()
        counts["tombstone_in_clear"] = connection.execute(
            text("SELECT count(*) FROM erased_users WHERE key = :u OR key LIKE :c"), {"u": user_id, "c": f"%{user_id}%"}).scalar_one()
    return {name: count for name, count in counts.items() if count}


@pytest.mark.parametrize("erase_after", [0.0, 0.5], ids=["erase-at-once", "erase-mid-answer"])
def test_erasure_racing_turns_in_flight(runtime: Runtime, erase_after: float):
    server = ensure_running()
    server.faults.clear()
    backends = [build_backend(name, runtime) for name in BACKENDS]
    canary = f"wombat{uuid.uuid4().hex[:10]}"
    user = new_user(runtime, "rel-race")
    for backend in backends:  # the user has data everywhere before the race
        assert turn(backend, user, f"Remember that my code word is {canary}.").error is None
    drain(runtime, user_id=user, max_seconds=60)

    figure = Figure(f"erasure racing turns ({'at once' if erase_after == 0 else 'mid-answer'})")
    server.faults.inject("timeout", times=None, seconds=MODEL_DELAY)  # every answer takes MODEL_DELAY
    outcomes: dict[str, object] = {}

    def in_flight(backend) -> None:
        try:
            outcomes[backend.name] = turn(backend, user, f"Again, my code word is {canary}.")
        except Exception as error:  # noqa: BLE001 - the figure counts it
            outcomes[backend.name] = error

    try:
        threads = [threading.Thread(target=in_flight, args=(backend,)) for backend in backends]
        for thread in threads:
            thread.start()
        time.sleep(erase_after)
        erase_user_everywhere(runtime, user)
        left_at_return = traces(runtime, user, canary)
        for thread in threads:
            thread.join(60)
    finally:
        server.faults.clear()
    drain(runtime, max_seconds=60)  # any job that slipped through would run now

    figure.check("nothing left when the erasure returns (turns still running)",
                 not left_at_return, left_at_return)
    for name, outcome in outcomes.items():
        figure.check(f"{name} turn in flight raised nothing", not isinstance(outcome, Exception), repr(outcome)[:200])
    figure.check("nothing of the user after the turns in flight finished", not traces(runtime, user, canary),
                 traces(runtime, user, canary))
    for backend in backends:  # a column that starts late
        late = turn(backend, user, f"One more time: {canary}.")
        figure.check(f"{backend.name} late turn refused", bool(late.error) and not late.jobs, late.error)
    drain(runtime, max_seconds=60)
    figure.check("a late turn re-created nothing", not traces(runtime, user, canary), traces(runtime, user, canary))
    # A deliberate "Create user" of the same name starts a new, empty user.
    runtime.store.ensure_user(user)
    figure.check("re-created on purpose, the user is empty", all(backend.all_texts(user) == [] for backend in backends),
                 [backend.all_texts(user) for backend in backends])
    figure.check("and can chat again", turn(backends[0], user, "Hello again.").error is None, "")
    figure.report()

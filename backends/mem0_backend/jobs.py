"""The `mem0.add` job: Mem0's extraction for one finished turn, off the request path.

Idempotency. The queue runs a job at least once (a worker whose lease ran out is re-run),
so the effect is guarded by a `memory_jobs` row keyed on the turn's user message id. The
guard is inserted in a transaction that stays open around Mem0's add and commits after it:
  * a duplicate run blocks on the uncommitted guard key, then finds it and skips;
  * an add that raises rolls the guard back, so the retry runs the add again;
  * the message row is locked (FOR KEY SHARE) so erasure cannot delete the turn while its
    add is in flight, and a job whose turn was erased finds no message and does nothing.
Residual window: Mem0 writes to pgvector and SQLite on its own connections, outside our
transaction. If the process dies (or our connection drops) after Mem0's insert committed
but before our commit, the guard is rolled back and the retry adds again. Mem0 skips a
memory whose text hash equals one of the 10 nearest existing memories, so a deterministic
extractor (the offline model) re-adds nothing; a real LLM that words a fact differently on
the retry can leave a near-duplicate.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Connection, text

from backends.mem0_backend.store import get_store
from backends.runtime import Runtime
from db.models import EventLog

BACKEND = "mem0"
KIND = "mem0.add"


def add_payload(user_id: str, user_text: str, reply: str, user_message_id: str, assistant_message_id: str | None) -> dict[str, Any]:
    """What the job needs, nothing more (erasure deletes it with the user's jobs)."""
    return {"user_id": user_id, "user_text": user_text, "reply": reply,
            "message_id": user_message_id, "assistant_message_id": assistant_message_id}


def _claim_guard(connection: Connection, user_id: str, message_id: uuid.UUID, now: Any) -> str | None:
    """None when the add may run; otherwise why it must not."""
    exists = connection.execute(
        text("SELECT 1 FROM messages WHERE id = :id AND user_id = :user_id FOR KEY SHARE"), {"id": message_id, "user_id": user_id}
    ).first()
    if exists is None:
        return "turn no longer exists (erased)"
    inserted = connection.execute(
        text("INSERT INTO memory_jobs (message_id, user_id, processed_at) VALUES (:id, :user_id, :now) "
             "ON CONFLICT (message_id) DO NOTHING RETURNING message_id"),
        {"id": message_id, "user_id": user_id, "now": now},
    ).first()
    return None if inserted is not None else "already added"


def _note_event(connection: Connection, user_id: str, stored: list[dict[str, Any]], message_id: str, job_id: int | None, now: Any) -> None:
    texts = [item.get("memory", "") for item in stored]
    detail = {"text": "; ".join(texts), "memories": [{"id": item.get("id"), "text": item.get("memory")} for item in stored],
              "message_id": message_id, "job_id": job_id}
    table = EventLog.__table__
    connection.execute(table.insert().values(user_id=user_id, backend=BACKEND, kind="noted", detail=detail, created_at=now))


def run_add(runtime: Runtime, payload: dict[str, Any], job_id: int | None) -> dict[str, Any] | None:
    """Run Mem0's add for one turn exactly once in effect (see the module docstring)."""
    user_id, message_id = payload["user_id"], payload["message_id"]
    messages = [{"role": "user", "content": payload["user_text"]}, {"role": "assistant", "content": payload["reply"]}]
    store = get_store(runtime)
    now = runtime.clock.now()
    with runtime.engine.begin() as connection:
        skipped = _claim_guard(connection, user_id, uuid.UUID(message_id), now)
        if skipped is not None:
            return {"skipped": skipped}
        # created_at from the lab's clock (Mem0 would use the wall clock), so time travel applies.
        stored = store.add(user_id, messages, {"source_message_id": message_id, "created_at": now.isoformat()})
        if stored:
            _note_event(connection, user_id, stored, message_id, job_id, now)
    return {"stored": len(stored), "memory_ids": [item.get("id") for item in stored]}

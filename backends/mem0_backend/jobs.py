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

from backends.job_records import claim, record_noted
from backends.mem0_backend.store import get_store
from backends.services import Services
from core import NotedEvent, NotedMemory

BACKEND = "mem0"
KIND = "mem0.add"


def add_payload(user_id: str, user_message_id: str, assistant_message_id: str | None) -> dict[str, Any]:
    """Ids only: the handler reads the turn's text itself (scoped by user), so a queued job
    never becomes another copy of what the user said (or of a secret they typed)."""
    return {"user_id": user_id, "message_id": user_message_id, "assistant_message_id": assistant_message_id}


def _lock_turn(connection: Connection, user_id: str, message_id: uuid.UUID) -> str | None:
    """The user message's text, locked (FOR KEY SHARE) so erasure cannot delete the turn while
    its add is in flight; None when the turn no longer exists (erased)."""
    return connection.execute(
        text("SELECT text FROM messages WHERE id = :id AND user_id = :user_id FOR KEY SHARE"),
        {"id": message_id, "user_id": user_id},
    ).scalar()


def _reply_text(connection: Connection, user_id: str, message_id: str | None) -> str:
    if not message_id:
        return ""
    return connection.execute(text("SELECT text FROM messages WHERE id = :id AND user_id = :user_id"),
                              {"id": uuid.UUID(message_id), "user_id": user_id}).scalar() or ""


def run_add(runtime: Services, payload: dict[str, Any], job_id: int | None) -> dict[str, Any] | None:
    """Run Mem0's add for one turn exactly once in effect (see the module docstring)."""
    user_id, message_id = payload["user_id"], payload["message_id"]
    store = get_store(runtime)
    now = runtime.clock.now()
    with runtime.engine.begin() as connection:
        user_text = _lock_turn(connection, user_id, uuid.UUID(message_id))
        if user_text is None:
            return {"skipped": "turn no longer exists (erased)"}
        if not claim(connection, uuid.UUID(message_id), user_id, now):
            return {"skipped": "already added"}
        messages = [{"role": "user", "content": user_text},
                    {"role": "assistant", "content": _reply_text(connection, user_id, payload.get("assistant_message_id"))}]
        # created_at from the lab's clock (Mem0 would use the wall clock), so time travel applies.
        stored = store.add(user_id, messages, {"source_message_id": message_id, "created_at": now.isoformat()})
        noted = _from_this_turn(connection, store, user_id, message_id, stored)
        record_noted(connection, user_id, NotedEvent(backend=BACKEND, message_id=message_id, job_id=job_id, memories=noted), now)
    return {"stored": len(stored), "memory_ids": [item.get("id") for item in stored]}


def _from_this_turn(connection: Connection, store: Any, user_id: str, message_id: str,
                    stored: list[dict[str, Any]]) -> list[NotedMemory]:
    """What this turn added: what Mem0 just returned, plus what an earlier attempt of this job
    stored before its worker died (Mem0 commits on its own connection, our guard rolled
    back, and the retry's add skips those texts as duplicates and returns nothing). Without
    this, a re-run job wrote no Noted event and the turn's "Noted:" line never appeared."""
    noted = {str(item.get("id")): item.get("memory", "") for item in stored}
    earlier = connection.execute(
        text(f"SELECT id, payload->>'data' FROM {store.table_name} "
             "WHERE payload->>'user_id' = :user_id AND payload->>'source_message_id' = :message_id"),
        {"user_id": user_id, "message_id": message_id},
    ).all()
    for memory_id, memory_text in earlier:
        noted.setdefault(str(memory_id), memory_text or "")
    return [NotedMemory(id=memory_id, text=memory_text) for memory_id, memory_text in noted.items()]

"""Canary erasure: a planted code word is in every Mem0 store before `erase_user` and in
none after, while another user's data is untouched.

Mem0's own `delete_all` would leave the text in its SQLite `history` and `messages`
tables; this test reads every table of that file AND its raw bytes.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from sqlalchemy import text

from backends.base import TurnContext
from backends.mem0_backend.backend import Mem0Backend
from backends.mem0_backend.config import COLLECTION
from tests.mem0.conftest import chat, chat_and_add

CANARY = "pineapple-42"


def sqlite_hits(path: Path) -> dict[str, int]:
    """table -> rows with the canary in any column."""
    hits: dict[str, int] = {}
    with closing(sqlite3.connect(str(path))) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            rows = connection.execute(f'SELECT * FROM "{table}"').fetchall()
            hits[table] = sum(1 for row in rows if any(CANARY in str(value) for value in row))
    return hits


def sqlite_file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))  # history.db, -journal, -wal


def postgres_hits(engine, user_id: str) -> dict[str, int]:
    """Every place in our database a copy could be: Mem0's table and the lab's own tables."""
    queries = {
        "mem0_vectors": f"SELECT count(*) FROM {COLLECTION} WHERE payload::text LIKE :like",
        "mem0_vectors_of_user": f"SELECT count(*) FROM {COLLECTION} WHERE payload->>'user_id' = :user",
        "messages": "SELECT count(*) FROM messages WHERE text LIKE :like OR payload LIKE :like",
        "jobs": "SELECT count(*) FROM jobs WHERE payload::text LIKE :like OR coalesce(result::text, '') LIKE :like",
        "event_log": "SELECT count(*) FROM event_log WHERE detail::text LIKE :like",
        "memory_jobs": "SELECT count(*) FROM memory_jobs WHERE user_id = :user",
        "conversations": "SELECT count(*) FROM conversations WHERE user_id = :user AND backend = 'mem0'",
    }
    with engine.connect() as connection:
        return {name: connection.execute(text(sql), {"like": f"%{CANARY}%", "user": user_id}).scalar_one()
                for name, sql in queries.items()}


def test_canary_is_gone_from_every_store_after_erasure(mem0_backend: Mem0Backend, runtime, make_user) -> None:
    from jobs.runner import drain

    canary_user, other = make_user("canary"), make_user("keeper")
    planted = mem0_backend.turn(TurnContext(user_id=canary_user, text=f"My code word is {CANARY}."))
    drain(runtime, user_id=canary_user)  # the queued add ran; its job row (with the payload) stays
    mem0_backend.new_conversation(canary_user)
    recalled = chat(mem0_backend, canary_user, "What is my code word?")  # injected into a persisted system row
    queued = mem0_backend.turn(TurnContext(user_id=canary_user, text=f"Again: my code word is {CANARY}."))  # not run
    chat_and_add(mem0_backend, other, "My favourite fruit is mango.")
    history_db = Path(mem0_backend.store.history_path)

    before = postgres_hits(runtime.engine, canary_user)
    assert planted.jobs and queued.jobs and CANARY in (recalled.recall.system_message or "")
    assert before["mem0_vectors"] >= 1 and before["messages"] >= 3 and before["jobs"] == 0 and before["event_log"] >= 1
    # Job payloads hold ids only (the queued add reads the turn from messages): no copy of the canary there.
    assert before["memory_jobs"] == 1 and before["conversations"] == 2
    assert sqlite_hits(history_db)["history"] >= 1 and sqlite_hits(history_db)["messages"] >= 1
    assert CANARY.encode() in sqlite_file_bytes(history_db)
    assert any(CANARY in t for t in mem0_backend.all_texts(canary_user))

    report = mem0_backend.erase_user(canary_user)

    assert postgres_hits(runtime.engine, canary_user) == {name: 0 for name in before}
    assert set(sqlite_hits(history_db).values()) == {0}
    assert CANARY.encode() not in sqlite_file_bytes(history_db)
    assert mem0_backend.all_texts(canary_user) == [] and mem0_backend.list_memories(canary_user) == []
    for store in ("mem0_vectors", "mem0_history", "mem0_messages", "messages", "jobs", "events", "memory_jobs"):
        assert report.deleted[store] > 0, (store, report.deleted)
    assert [m.content for m in mem0_backend.list_memories(other) if "mango" in m.content.lower()]  # others untouched
    assert any("mango" in t.lower() for t in mem0_backend.all_texts(other))

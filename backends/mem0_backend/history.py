"""Purging Mem0's SQLite history file, which Mem0 itself never cleans.

Mem0 keeps two tables in `history.db`: `history` (every ADD/UPDATE/DELETE of a memory with
its old and new text, keyed by memory id: a DELETE row even stores the deleted text) and
`messages` (the last raw turns per session scope, e.g. "user_id=alice"). Its `delete` and
`delete_all` only ADD rows there, so erasing a user, or deleting one memory, must remove
those rows itself. There is no user column in `history`: the caller passes the memory ids.

Our own connection (not Mem0's) with `secure_delete` on: SQLite then overwrites deleted
content with zeros instead of leaving it in free pages of the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

CHUNK = 500  # SQLite's default limit on bound parameters is far above; keeps statements small


def session_scope(user_id: str) -> str:
    """The `messages.session_scope` Mem0 writes for an add scoped to this user only.

    Mem0 builds it in `mem0.memory.main._build_session_scope` (sorted "key=value" pairs
    joined by '&', with '%', '&' and '=' percent-escaped). Written out here rather than
    importing Mem0's private helper, so this module never imports mem0 (see library.py);
    the canary erasure test fails if the two ever disagree.
    """
    escaped = user_id.replace("%", "%25").replace("&", "%26").replace("=", "%3D")
    return f"user_id={escaped}"


def _connect(db_path: str | Path) -> sqlite3.Connection:
    connection = sqlite3.connect(str(db_path), timeout=30)
    connection.execute("PRAGMA secure_delete = ON")
    return connection


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start:start + CHUNK]


def purge_memories(db_path: str | Path, memory_ids: Iterable[str]) -> int:
    """Delete every history row of these memories; returns the number of rows deleted."""
    ids = sorted({str(memory_id) for memory_id in memory_ids})
    if not ids or not Path(db_path).exists():
        return 0
    deleted = 0
    with closing(_connect(db_path)) as connection, connection:
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            deleted += connection.execute(f"DELETE FROM history WHERE memory_id IN ({marks})", chunk).rowcount
    return deleted


def purge_messages(db_path: str | Path, user_id: str) -> int:
    """Delete the raw turns Mem0 kept for this user's session scope."""
    if not Path(db_path).exists():
        return 0
    with closing(_connect(db_path)) as connection, connection:
        return connection.execute("DELETE FROM messages WHERE session_scope = ?", (session_scope(user_id),)).rowcount


def texts(db_path: str | Path, memory_ids: Iterable[str], user_id: str) -> list[str]:
    """Every text the history file holds for these memories and this user's raw turns."""
    ids = sorted({str(memory_id) for memory_id in memory_ids})
    if not Path(db_path).exists():
        return []
    found: list[str] = []
    with closing(sqlite3.connect(str(db_path), timeout=30)) as connection:
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            for old, new in connection.execute(f"SELECT old_memory, new_memory FROM history WHERE memory_id IN ({marks})", chunk):
                found.extend(value for value in (old, new) if value)
        found.extend(row[0] for row in connection.execute(
            "SELECT content FROM messages WHERE session_scope = ?", (session_scope(user_id),)) if row[0])
    return found


def vacuum(db_path: str | Path) -> None:
    """Rewrite the file without free pages. secure_delete covers our own deletes, but Mem0
    evicts old turns (beyond 10 per scope) on its own connection, leaving their text in
    free pages; after an erasure the file must not hold any of it."""
    if Path(db_path).exists():
        with closing(sqlite3.connect(str(db_path), timeout=30, isolation_level=None)) as connection:
            connection.execute("VACUUM")

"""Erasing a user ("Delete all my data"): a tombstone first, then every backend erases its
stores, then the rows no backend owns, then the touched tables are compacted.

Order, and why:
1. the tombstone (committed at once): from here on no turn or job can re-create the user
   (`db.tombstones`), even if a later step fails;
2. every backend's `erase_user`, then the shared rows, the users row last (a write in flight
   holds that row's lock, so its rows are deleted by the cascade, see `lock_user`);
3. VACUUM FULL + ANALYZE of every touched table and VACUUM FULL of pg_statistic
   (`db.compaction`), so no table file or `pg_stats` row still holds the deleted text.
"""

from __future__ import annotations

from sqlalchemy import Engine, delete, or_, text
from sqlmodel import Session, SQLModel

from backends.base import ErasureReport, MemoryBackend
from backends.registry import backend_names, build_backend
from backends.services import Services
from db.compaction import compact
from db.models import (
    Conversation, ConversationSummary, ErasedUser, EventLog, Job, Memory, MemoryFile, MemoryJob, Message, User,
)
from db.tombstones import tombstones_for

RETENTION_NOTES = (
    "Gone at once: every row of the user in the lab's tables and the backends' stores (Mem0's "
    "pgvector rows and its SQLite history), job payloads and events included.",
    "Gone from the database files at once: the touched tables were rewritten (VACUUM FULL) and "
    "their statistics rebuilt (ANALYZE), so no table file and no pg_stats row holds the text.",
    "Still in the write-ahead log (pg_wal): the inserts and deletes, until their WAL segments are "
    "overwritten; segments are recycled after a checkpoint (every 5 minutes by default), but a "
    "recycled file keeps old bytes until reused (up to min_wal_size/max_wal_size of traffic). "
    "With WAL archiving or replication, as long as the archive or the replica keeps them.",
    "Still in backups: any backup or copy of the data dir made before the erasure keeps "
    "everything until that backup is deleted; the lab makes none itself.",
    "Kept on purpose: a tombstone (a keyed hash of the user id, not the id) so that a turn in "
    "flight cannot re-create the user.",
)


class ErasureIncomplete(RuntimeError):
    """Some backend could not erase; the users row is kept so the erasure can be retried."""

    def __init__(self, failures: dict[str, str], reports: list[ErasureReport]) -> None:
        super().__init__("Erasure incomplete: " + "; ".join(f"{name}: {error}" for name, error in failures.items()))
        self.failures = failures
        self.reports = reports


def _erase_shared(engine: Engine, user_id: str) -> dict[str, int]:
    """Rows no single backend owns: every job of the user (payloads hold user text), the
    idempotency rows, the remaining events, anything a backend left in the per-user tables
    (counted, so a non-zero "leftover_*" shows which backend missed something), and last
    the users row itself."""
    leftovers = {"leftover_summaries": ConversationSummary, "leftover_messages": Message, "leftover_conversations": Conversation,
                 "leftover_memories": Memory, "leftover_memory_files": MemoryFile}
    with Session(engine) as session:
        counts = {name: session.execute(delete(table).where(table.user_id == user_id)).rowcount for name, table in leftovers.items()}
        counts |= {
            "jobs": session.execute(delete(Job).where(or_(Job.user_id == user_id, Job.payload["user_id"].astext == user_id))).rowcount,
            "memory_jobs": session.execute(delete(MemoryJob).where(MemoryJob.user_id == user_id)).rowcount,
            "events": session.execute(delete(EventLog).where(EventLog.user_id == user_id)).rowcount,
            "users": session.execute(delete(User).where(User.id == user_id)).rowcount,
        }
        session.commit()
    return counts


def record_tombstone(runtime: Services, user_id: str) -> None:
    """Committed before anything is deleted; serialised with `ConversationStore.active_user`."""
    with Session(runtime.engine) as session:
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"users:{user_id}"})
        tombstones_for(runtime.settings).record(session.connection(), user_id, runtime.clock.now())
        session.commit()


def touched_tables(backends: list[MemoryBackend]) -> list[str]:
    """The lab's tables (all hold user rows, the tombstones excepted) and every backend's own."""
    ours = [name for name in SQLModel.metadata.tables if name != ErasedUser.__tablename__]
    return ours + [name for backend in backends for name in backend.erased_tables()]


def _notes(compaction: dict[str, int]) -> list[str]:
    notes = list(RETENTION_NOTES)
    if compaction["compaction_failures"]:
        notes.append(f"{compaction['compaction_failures']} table(s) could not be rewritten now: their files keep "
                     "the deleted rows until the next erasure or autovacuum reuses the space.")
    if not compaction["statistics_compacted"]:
        notes.append("pg_statistic was not rewritten (the database role is not a superuser): old statistics "
                     "rows stay in its file until autovacuum reuses the space; pg_stats shows only the new ones.")
    return notes


def erase_user_everywhere(runtime: Services, user_id: str) -> list[ErasureReport]:
    """"Delete all my data": tombstone, every backend's stores, the shared rows, compaction.

    Returns one ErasureReport per backend plus one for the shared rows ("shared", whose
    `notes` say what is gone at once and what the WAL and backups keep). If a backend fails,
    the others still run, the users row is kept (the tombstone too: nobody re-creates the
    user meanwhile), and ErasureIncomplete says which store still holds data.
    """
    record_tombstone(runtime, user_id)
    reports: list[ErasureReport] = []
    failures: dict[str, str] = {}
    backends: list[MemoryBackend] = []
    for name in backend_names():
        try:
            backend = build_backend(name, runtime)
            backends.append(backend)
            reports.append(backend.erase_user(user_id))
        except Exception as error:  # noqa: BLE001 - keep erasing elsewhere, then report the failure
            failures[name] = f"{type(error).__name__}: {error}"
    if failures:
        raise ErasureIncomplete(failures, reports)
    deleted = _erase_shared(runtime.engine, user_id)
    compaction = compact(runtime.engine, touched_tables(backends))
    reports.append(ErasureReport(backend="shared", user_id=user_id, deleted=deleted | compaction, notes=_notes(compaction)))
    return reports

"""Erasing a user ("Delete all my data"): every backend erases its stores, then the rows no backend owns."""

from __future__ import annotations

from sqlalchemy import Engine, delete, or_
from sqlmodel import Session

from backends.base import ErasureReport
from backends.registry import backend_names, build_backend
from backends.services import Services
from db.models import Conversation, ConversationSummary, EventLog, Job, Memory, MemoryFile, MemoryJob, Message, User


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


def erase_user_everywhere(runtime: Services, user_id: str) -> list[ErasureReport]:
    """"Delete all my data": every backend in the registry erases its stores, then the shared rows.

    Returns one ErasureReport per backend plus one for the shared rows ("shared"). If a
    backend fails, the others still run, the users row is kept, and ErasureIncomplete says
    which store still holds data.
    """
    reports: list[ErasureReport] = []
    failures: dict[str, str] = {}
    for name in backend_names():
        try:
            reports.append(build_backend(name, runtime).erase_user(user_id))
        except Exception as error:  # noqa: BLE001 - keep erasing elsewhere, then report the failure
            failures[name] = f"{type(error).__name__}: {error}"
    if failures:
        raise ErasureIncomplete(failures, reports)
    reports.append(ErasureReport(backend="shared", user_id=user_id, deleted=_erase_shared(runtime.engine, user_id)))
    return reports

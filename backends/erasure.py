"""Hard deletion of the rows every backend shares (conversations, messages including the
injected system rows, summaries, events), scoped to one user and one backend."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Engine, delete, or_, select
from sqlmodel import Session

from backends.base import ErasureReport
from db.models import Conversation, ConversationSummary, EventLog, Job, Memory, MemoryFile, MemoryJob, Message, User

if TYPE_CHECKING:
    from backends.runtime import Runtime


def erase_conversations(engine: Engine, user_id: str, backend: str) -> dict[str, int]:
    """Delete the user's conversations with one backend and everything hanging off them."""
    with Session(engine) as session:
        ids = list(session.scalars(select(Conversation.id).where(Conversation.user_id == user_id, Conversation.backend == backend)))
        counts = {
            "summaries": session.execute(delete(ConversationSummary).where(ConversationSummary.user_id == user_id, ConversationSummary.conversation_id.in_(ids))).rowcount,
            "messages": session.execute(delete(Message).where(Message.user_id == user_id, Message.conversation_id.in_(ids))).rowcount,
            "conversations": session.execute(delete(Conversation).where(Conversation.user_id == user_id, Conversation.id.in_(ids))).rowcount,
            "events": session.execute(delete(EventLog).where(EventLog.user_id == user_id, EventLog.backend == backend)).rowcount,
        }
        session.commit()
    return counts


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


def erase_user_everywhere(runtime: "Runtime", user_id: str) -> list[ErasureReport]:
    """"Delete all my data": every backend in the registry erases its stores, then the shared rows.

    Returns one ErasureReport per backend plus one for the shared rows ("shared"). If a
    backend fails, the others still run, the users row is kept, and ErasureIncomplete says
    which store still holds data.
    """
    from backends.registry import backend_names, build_backend  # the registry imports the backends, which import this module

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

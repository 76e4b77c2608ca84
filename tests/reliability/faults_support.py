"""Shared by the faults / erasure / workers / restart reliability tests: the figure each
test prints (tried / failed, with what failed), runtimes with small limits, and turns.

Not a conftest: tests/ has several folders with conftests of the same module name, and a
plain module imported by path cannot clash with the other reliability files' fixtures.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from backends.base import Knobs, TurnContext, TurnResult
from clock import Clock
from db.models import EventLog, Job, Memory, MemoryJob, Message
from runtime import Runtime

FACT = "I live in Tromsø and I play the cello every Sunday."
"""Two facts every backend's extractor stores (our own sentence, not from the dev sets)."""
NOTHING = "Hello there, how is your day going?"
"""Small talk: the genuine "nothing to store" answer."""


@dataclass
class Figure:
    """One reliability figure: how many cases were tried and which failed (printed, then asserted)."""

    name: str
    tried: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, label: str, ok: bool, detail: Any = "") -> bool:
        self.tried += 1
        if not ok:
            self.failures.append(f"{label}: {detail}")
        return ok

    def report(self) -> None:
        print(f"\nFIGURE {self.name}: tried {self.tried}, failed {len(self.failures)}")
        for failure in self.failures:
            print(f"  FAILED {failure}")
        assert self.tried > 0, f"{self.name}: nothing was tried"
        assert not self.failures, f"{self.name}: {len(self.failures)} of {self.tried} failed:\n" + "\n".join(self.failures)


def small_runtime(base: Runtime, **settings: Any) -> Runtime:
    """The shared database and embedder, with its own clock and settings (e.g. a short LLM timeout)."""
    return Runtime(settings=base.settings.model_copy(update=settings), engine=base.engine, embedder=base.embedder,
                   clock=Clock())


def new_user(runtime: Runtime, prefix: str = "rel") -> str:
    return runtime.store.ensure_user(f"{prefix}-{uuid.uuid4().hex[:12]}")


def turn(backend: Any, user_id: str, text: str) -> TurnResult:
    return backend.turn(TurnContext(user_id=user_id, text=text, knobs=Knobs.from_settings(backend.runtime.settings)))


def user_jobs(runtime: Runtime, user_id: str) -> list[Job]:
    with Session(runtime.engine, expire_on_commit=False) as session:
        return list(session.scalars(select(Job).where(Job.user_id == user_id).order_by(Job.id)))


def count_rows(runtime: Runtime, table: Any, user_id: str) -> int:
    with Session(runtime.engine) as session:
        return int(session.scalar(select(func.count()).select_from(table).where(table.user_id == user_id)) or 0)


def guard_rows(runtime: Runtime, user_id: str) -> int:
    return count_rows(runtime, MemoryJob, user_id)


def noted_events(runtime: Runtime, user_id: str) -> list[dict[str, Any]]:
    with Session(runtime.engine) as session:
        return [dict(detail) for detail in session.scalars(
            select(EventLog.detail).where(EventLog.user_id == user_id, EventLog.kind == "noted"))]


def message_count(runtime: Runtime, user_id: str) -> int:
    return count_rows(runtime, Message, user_id)


def custom_memory_count(runtime: Runtime, user_id: str) -> int:
    return count_rows(runtime, Memory, user_id)

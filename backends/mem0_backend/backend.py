"""The Mem0 column: Mem0 recalls before the model call and adds after it, as a queued job.

The turn itself is the shared `ChatTurnRunner`, so injection, history and metrics are the
same bytes as in the other columns; only recall (Mem0's search) and the after-turn work
(Mem0's add) differ. A `forget` tool lets "forget that ..." in chat reach Mem0's store.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import Session

from backends.base import ErasureReport, MemoryBackend, MemoryRecord, Recall, TextCallback, TurnContext, TurnResult
from backends.conversation_erasure import erase_conversations
from backends.forget_tool import FORGET_CANDIDATES, forget_step, matching
from backends.mem0_backend import history, indexes
from backends.mem0_backend.config import COLLECTION
from backends.mem0_backend.jobs import BACKEND, KIND, add_payload
from backends.mem0_backend.recall import recall
from backends.mem0_backend.store import Mem0Store, get_store, parse_time
from backends.services import Services
from chat.store import normalise_user_id
from chat.turn import ChatTurnRunner
from db.models import Conversation, EventLog, Job, MemoryJob, Message


def _record(item: dict[str, Any]) -> MemoryRecord:
    metadata = item.get("metadata") or {}
    return MemoryRecord(id=str(item["id"]), content=item.get("memory", ""), created_at=parse_time(item.get("created_at")),
                        source_message_id=metadata.get("source_message_id"),
                        extra={"hash": item.get("hash"), "updated_at": item.get("updated_at")})


class Mem0Backend(MemoryBackend):
    name = BACKEND
    label = "Mem0"
    recalls_by_vector = True
    description = "mem0ai's open-source Memory: its own extraction, pgvector store and search."

    def __init__(self, runtime: Services, store: Mem0Store | None = None) -> None:
        self.runtime = runtime
        self._given_store = store
        self.runner = ChatTurnRunner(self.name, runtime.store, runtime.history, runtime.chat_model)

    @functools.cached_property
    def store(self) -> Mem0Store:
        """Built on first use: the lab can list backends without loading Mem0."""
        return self._given_store or get_store(self.runtime)

    def warm_up(self) -> None:
        """Import Mem0, open its pool, check its tables: about half a second, off the first turn."""
        self.store  # noqa: B018 - the cached property builds the store

    # -- a turn ------------------------------------------------------------------
    def prepare_turn(self, context: TurnContext) -> Recall:
        return recall(self.store, context.user_id, context.text, context.knobs, context.query_vector)

    def run_turn(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None) -> TurnResult:
        step = forget_step(lambda topic: self.forget(context.user_id, topic))  # the session's user, never tool input
        return self.runner.run(context, recall, on_text, step=step)

    def after_turn(self, context: TurnContext, result: TurnResult) -> list[int]:
        """Queue Mem0's add for this turn (the reply is already on screen)."""
        payload = add_payload(context.user_id, result.user_message_id or "", result.assistant_message_id)
        return [self.runtime.enqueue(KIND, payload, user_id=context.user_id)]

    # -- conversations -----------------------------------------------------------
    def new_conversation(self, user_id: str) -> None:
        self.runtime.store.end_conversations(normalise_user_id(user_id), self.name)

    # -- what is stored ----------------------------------------------------------
    def remember(self, user_id: str, text: str, kind: str = "semantic", created_at: datetime | None = None) -> str:
        """Mem0 stores the text as given (`infer=False`); it has no kinds and dates it now."""
        return self.store.remember(normalise_user_id(user_id), text)

    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        """Mem0 keeps live memories only (its add never supersedes), so inactive adds nothing."""
        return [_record(item) for item in self.store.list(normalise_user_id(user_id))]

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        return self.store.delete(normalise_user_id(user_id), memory_id) is not None

    def forget(self, user_id: str, topic: str) -> list[MemoryRecord]:
        user_id = normalise_user_id(user_id)
        if not topic.strip():
            return []
        hits = self.store.search(user_id, topic, top_k=FORGET_CANDIDATES, threshold=0.0)
        about = matching([(hit.id, hit.similarity) for hit in hits])
        deleted = [self.store.delete(user_id, memory_id) for memory_id in about]
        return [_record(item) for item in deleted if item is not None]

    def erase_user(self, user_id: str) -> ErasureReport:
        """Every copy: queued jobs, turns, Mem0's vectors, Mem0's SQLite history and messages.

        Order matters: jobs first (no add starts afterwards), then the turns (this waits for
        an add in flight, which holds its message row, see jobs.py), then the guard rows and
        Mem0's stores, which by then include whatever that add wrote.
        """
        user_id = normalise_user_id(user_id)
        engine, deleted = self.runtime.engine, {}
        with Session(engine) as session:
            deleted["jobs"] = session.execute(delete(Job).where(Job.user_id == user_id, Job.kind == KIND)).rowcount
            noted_ids = self._noted_memory_ids(session, user_id)
            message_ids = list(session.scalars(select(Message.id).join(Conversation, Conversation.id == Message.conversation_id).where(
                Conversation.user_id == user_id, Conversation.backend == self.name)))
            session.commit()
        deleted.update(erase_conversations(engine, user_id, self.name))
        with Session(engine) as session:
            deleted["memory_jobs"] = session.execute(
                delete(MemoryJob).where(MemoryJob.user_id == user_id, MemoryJob.message_id.in_(message_ids))).rowcount
            session.commit()
        vectors = self.store.delete_vectors(user_id)
        deleted.update(vectors["counts"])
        deleted["mem0_history"] = history.purge_memories(self.store.history_path, set(vectors["ids"]) | noted_ids)
        deleted["mem0_messages"] = history.purge_messages(self.store.history_path, user_id)
        history.vacuum(self.store.history_path)
        return ErasureReport(backend=self.name, user_id=user_id, deleted=deleted)

    def erased_tables(self) -> list[str]:
        """Mem0's pgvector collection and its entities table (named from the collection, so
        listing them does not load Mem0)."""
        collection = self._given_store.collection if self._given_store is not None else COLLECTION
        return [collection, indexes.entities_table(collection)]

    def _noted_memory_ids(self, session: Session, user_id: str) -> set[str]:
        """Ids of every memory Mem0 ever stored for the user (incl. ones deleted since)."""
        details = session.scalars(select(EventLog.detail).where(
            EventLog.user_id == user_id, EventLog.backend == self.name, EventLog.kind == "noted"))
        return {str(m["id"]) for detail in details for m in (detail or {}).get("memories", []) if m.get("id")}

    def all_texts(self, user_id: str) -> list[str]:
        """Live memories, plus the history file's texts of every memory Mem0 stored for the
        user and the raw turns it kept: everything erasure must remove."""
        user_id = normalise_user_id(user_id)
        with Session(self.runtime.engine) as session:
            ids = self._noted_memory_ids(session, user_id) | set(self.store.vector_ids(user_id))
        return self.stored_texts(user_id) + history.texts(self.store.history_path, ids, user_id)

"""The custom pipeline as a lab column: every memory decision explicit and inspectable.

prepare_turn = recall (scored, gated, budgeted); run_turn = the shared turn loop with the
notes injected as a mid-conversation system message and a `forget` tool; after_turn =
queue extraction (per turn, or per session when settings.extract_when == "session").
"""

from __future__ import annotations

import uuid
from datetime import datetime

from backends.base import (
    ErasureReport, Knobs, MemoryBackend, MemoryRecord, Note, Recall, TextCallback, TurnContext, TurnResult,
)
from backends.custom import forgetting, jobs, memories
from backends.custom.extraction import MemoryOperation
from backends.custom.recall import recall, select_notes
from backends.custom.reconcile import apply_operations
from backends.custom.retopic import relabel_stale
from backends.custom.topics import topic_index
from backends.forget_tool import forget_step
from backends.services import Services
from chat.store import normalise_user_id
from chat.turn import ChatTurnRunner


class CustomPipelineBackend(MemoryBackend):
    name = "custom"
    label = "Custom pipeline"
    recalls_by_vector = True
    description = "Our extraction -> Postgres/pgvector -> scored recall -> injected notes, with update, expiry and deletion."

    def __init__(self, runtime: Services) -> None:
        self.runtime = runtime
        self.runner = ChatTurnRunner(self.name, runtime.store, runtime.history, runtime.chat_model)

    def warm_up(self) -> None:
        """Embed the retrieval topics' asks (about a second with MiniLM), off the first turn,
        and relabel the memories an older lexicon labelled (backends/custom/retopic.py)."""
        relabel_stale(self.runtime.engine, topic_index(self.runtime.embedder))

    # -- a turn ------------------------------------------------------------------
    def prepare_turn(self, context: TurnContext) -> Recall:
        return recall(self.runtime.engine, self.runtime.embedder, topic_index(self.runtime.embedder), context.user_id,
                      context.text, context.knobs, self.runtime.clock.now(), self.runtime.settings.importance_weight,
                      context.query_vector)

    def select_notes(self, notes: list[Note], knobs: Knobs) -> list[Note]:
        return select_notes(notes, knobs)

    def run_turn(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None) -> TurnResult:
        step = forget_step(lambda topic: self.forget(context.user_id, topic))
        return self.runner.run(context, recall, on_text, step=step)

    def after_turn(self, context: TurnContext, result: TurnResult) -> list[int]:
        if self.runtime.settings.extract_when != "turn" or result.user_message_id is None:
            return []  # session mode: extraction is queued when the conversation ends
        return [jobs.enqueue_turn(self.runtime, context.user_id, result.user_message_id)]

    # -- conversations -----------------------------------------------------------
    def new_conversation(self, user_id: str) -> None:
        user_id = normalise_user_id(user_id)  # ending conversations never creates (or revives) a user
        ended = self.runtime.store.end_conversations(user_id, self.name)
        if self.runtime.settings.extract_when == "session":
            for conversation_id in ended:
                jobs.enqueue_session(self.runtime, user_id, conversation_id)

    # -- what is stored ----------------------------------------------------------
    def remember(self, user_id: str, text: str, kind: str = "semantic", created_at: datetime | None = None) -> str:
        """The extraction job's own write path (embedding, topics, guard, Noted event), fed
        one operation instead of a model's answer."""
        user_id = self.runtime.store.ensure_user(user_id)
        operation = MemoryOperation(op="add", kind=kind, content=text, evidence=text)
        outcome = apply_operations(self.runtime.engine, self.runtime.embedder, topic_index(self.runtime.embedder),
                                   created_at or self.runtime.clock.now(), user_id, uuid.uuid4(), [operation], {})
        return outcome.added_ids[0]

    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        return memories.list_memories(self.runtime.engine, user_id, self.runtime.clock.now(), include_inactive)

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        return forgetting.delete_memory(self.runtime.engine, user_id, memory_id, self.runtime.clock.now())

    def forget(self, user_id: str, topic: str) -> list[MemoryRecord]:
        return forgetting.forget(self.runtime.engine, self.runtime.embedder, user_id, topic, self.runtime.clock.now())

    def erase_user(self, user_id: str) -> ErasureReport:
        return forgetting.erase_user(self.runtime.engine, user_id)

    def sweep(self) -> dict[str, int]:
        return forgetting.sweep(self.runtime.engine, self.runtime.clock.now())

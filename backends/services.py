"""What a backend is built from: settings, database, embedder, clock, models, the
conversation store, and a way to queue background work.

Backends see only this; the application wiring (`runtime.Runtime`, at the top) fills it
in, including which queue `enqueue` writes to, so no backend imports the job runner and
the job runner can import the backends.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from chat.history import History
from chat.store import ConversationStore
from clock import Clock, clock as process_clock
from db.tombstones import tombstones_for
from embeddings import Embedder
from llm.chat_model import ChatModel
from llm.provider import build_chat_model
from settings import Settings


class QueueNotWired(RuntimeError):
    """`enqueue` on services built without the application's queue."""


@dataclass
class Services:
    settings: Settings
    engine: Engine
    embedder: Embedder
    clock: Clock = field(default_factory=lambda: process_clock)

    @functools.cached_property
    def chat_model(self) -> ChatModel:
        """Built on first use: the offline model's server starts only when a turn needs it."""
        return build_chat_model(self.settings, "chat")

    @functools.cached_property
    def extraction_model(self) -> ChatModel:
        return build_chat_model(self.settings, "extraction")

    @functools.cached_property
    def store(self) -> ConversationStore:
        return ConversationStore(self.engine, self.clock, tombstones_for(self.settings))

    @functools.cached_property
    def history(self) -> History:
        return History(self.engine, self.store, self.extraction_model, self.settings.history_token_budget)

    def enqueue(self, kind: str, payload: dict[str, Any], user_id: str | None = None) -> int:
        """Queue background work (payloads hold ids, never user text); returns the job id."""
        raise QueueNotWired("These services have no job queue: build them with runtime.build_runtime().")

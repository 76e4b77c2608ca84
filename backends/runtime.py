"""What every backend is built from, created once per process.

One object instead of module globals so tests can build an isolated runtime (its own
clock, its own models) and the lab can share one across Streamlit reruns.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from sqlalchemy import Engine

from chat.history import History
from chat.store import ConversationStore
from clock import Clock, clock as process_clock
from embeddings import Embedder, get_embedder
from llm.chat_model import ChatModel
from settings import Settings, get_settings


@dataclass
class Runtime:
    settings: Settings
    engine: Engine
    embedder: Embedder
    clock: Clock = field(default_factory=lambda: process_clock)

    @functools.cached_property
    def chat_model(self) -> ChatModel:
        """Built on first use: the offline model's server starts only when a turn needs it."""
        from llm.provider import build_chat_model

        return build_chat_model(self.settings, "chat")

    @functools.cached_property
    def extraction_model(self) -> ChatModel:
        from llm.provider import build_chat_model

        return build_chat_model(self.settings, "extraction")

    @functools.cached_property
    def store(self) -> ConversationStore:
        return ConversationStore(self.engine, self.clock)

    @functools.cached_property
    def history(self) -> History:
        return History(self.engine, self.store, self.extraction_model, self.settings.history_token_budget)


def build_runtime(settings: Settings | None = None, clock: Clock | None = None) -> Runtime:
    from db.engine import make_engine
    from db.schema import ensure_schema
    settings = settings or get_settings()
    embedder = get_embedder(settings)
    engine = make_engine(settings)
    ensure_schema(engine, embedder.dimension)
    return Runtime(
        settings=settings,
        engine=engine,
        embedder=embedder,
        clock=clock or process_clock,
    )


@functools.lru_cache(maxsize=1)
def get_runtime() -> Runtime:
    """The process-wide runtime (the lab caches it across reruns too)."""
    return build_runtime()

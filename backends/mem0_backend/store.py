"""One configured Mem0 `Memory` per process and configuration, with the operations the
backend needs, each scoped to one user.

Building a `Memory` opens a connection pool (its embedder is the process's shared one,
see embedder.py), so it is done once and shared by the backend (request path) and the `mem0.add` job handler (worker).
Every call takes the user id from the caller (the server session), never from a model.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, text

from backends.mem0_backend import history, indexes
from backends.mem0_backend.config import COLLECTION, history_db_path, mem0_config
from backends.mem0_backend.embedder import LabEmbedding
from backends.mem0_backend.library import json_helpers, memory_class
from backends.mem0_backend.llm_guard import guard_llm, mem0_json_parser
from backends.services import Services
from core.secrets import redact

LIST_LIMIT = 10_000
"""get_all's cap when listing a user's memories (the Memories page, erasure checks)."""


@dataclass(frozen=True)
class Hit:
    """One Mem0 search result with both of its numbers."""

    id: str
    text: str
    created_at: datetime | None
    similarity: float  # cosine similarity from pgvector (Mem0 clamps it at 0)
    score: float  # Mem0's combined score (semantic + BM25 + entity boost, normalised)


def parse_time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _hit(item: dict[str, Any]) -> Hit:
    details = item.get("score_details") or {}
    similarity = float(details.get("semantic_score", item.get("score") or 0.0))
    return Hit(id=str(item["id"]), text=item.get("memory", ""), created_at=parse_time(item.get("created_at")),
               similarity=similarity, score=float(item.get("score") or 0.0))


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


class Mem0Store:
    def __init__(self, runtime: Services, collection: str = COLLECTION, default_index: bool | None = None) -> None:
        settings = runtime.settings
        self.engine: Engine = runtime.engine
        self.collection = collection
        self.default_index = settings.mem0_default_index if default_index is None else default_index
        self.history_path = history_db_path(settings)
        dimension = runtime.embedder.dimension
        indexes.check_dimension(self.engine, collection, dimension)
        config = mem0_config(settings, self.engine, dimension, collection, self.default_index)
        self.memory = memory_class(settings).from_config(config)
        self.embedding = self.memory.embedding_model = LabEmbedding(runtime.embedder)  # the process's one MiniLM
        self.memory.llm = guard_llm(self.memory.llm, settings, mem0_json_parser(*json_helpers(settings)))
        self.memory.vector_store.create_col()  # idempotent; Mem0 would otherwise create it lazily
        indexes.ensure_layout(self.engine, collection, self.default_index)

    # -- recall ------------------------------------------------------------------
    def search(self, user_id: str, query: str, top_k: int, threshold: float = 0.0, vector: Any = None) -> list[Hit]:
        """Mem0's own search for this user; `explain` keeps the cosine similarity of each hit.
        `vector`: the query's embedding when the turn already has it (Mem0 then embeds nothing)."""
        with self.embedding.given(query, vector):
            result = self.memory.search(query, top_k=top_k, filters={"user_id": user_id},
                                        threshold=min(max(threshold, 0.0), 1.0), explain=True)
        return [_hit(item) for item in result["results"]]

    # -- writes --------------------------------------------------------------------
    def add(self, user_id: str, messages: list[dict[str, str]], metadata: dict[str, Any]) -> list[dict[str, Any]]:
        """Mem0's add (one LLM extraction call); returns what it stored.

        Sentences holding a secret are redacted first: Mem0 keeps the raw turns in its
        history file and stores whatever its extraction returns, with no secret check of
        its own, so the only place to keep a password out of Mem0 is before it sees one.
        """
        clean = [{**message, "content": redact(message.get("content") or "").text} for message in messages]
        return self.memory.add(clean, user_id=user_id, metadata=metadata)["results"]

    def remember(self, user_id: str, text: str) -> str:
        """Mem0's add with `infer=False`: the text is stored as it is, without an LLM call."""
        results = self.memory.add([{"role": "user", "content": text}], user_id=user_id, infer=False)["results"]
        return str(results[0]["id"])

    def owned(self, user_id: str, memory_id: str) -> dict[str, Any] | None:
        """The memory if it exists AND belongs to this user (ids alone are not authority)."""
        if not _is_uuid(memory_id):
            return None
        item = self.memory.get(memory_id)
        return item if item is not None and item.get("user_id") == user_id else None

    def delete(self, user_id: str, memory_id: str) -> dict[str, Any] | None:
        """Delete one of the user's memories, and its text from Mem0's history file."""
        item = self.owned(user_id, memory_id)
        if item is None:
            return None
        self.memory.delete(memory_id)
        history.purge_memories(self.history_path, [memory_id])
        return item

    # -- reads ---------------------------------------------------------------------
    def list(self, user_id: str) -> list[dict[str, Any]]:
        return self.memory.get_all(filters={"user_id": user_id}, top_k=LIST_LIMIT)["results"]

    def vector_ids(self, user_id: str) -> list[str]:
        with self.engine.connect() as connection:
            return [str(i) for i in connection.execute(
                text(f"SELECT id FROM {self._table()} WHERE payload->>'user_id' = :user_id"), {"user_id": user_id}
            ).scalars()]

    # -- erasure -------------------------------------------------------------------
    def delete_vectors(self, user_id: str) -> dict[str, Any]:
        """Hard-delete the user's rows in Mem0's tables; returns the memory ids and counts.

        Plain SQL rather than Mem0's delete_all: one statement, and no DELETE rows (each
        carrying the memory's text) written to the history file on the way out.
        """
        counts: dict[str, int] = {}
        with self.engine.begin() as connection:
            ids = [str(i) for i in connection.execute(
                text(f"DELETE FROM {self._table()} WHERE payload->>'user_id' = :user_id RETURNING id"), {"user_id": user_id}
            ).scalars()]
            counts["mem0_vectors"] = len(ids)
            entities = indexes.entities_table(self.collection)
            if connection.execute(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": f'public."{entities}"'}).scalar_one():
                counts["mem0_entities"] = connection.execute(
                    text(f"DELETE FROM {self._table(entities)} WHERE payload->>'user_id' = :user_id"), {"user_id": user_id}
                ).rowcount
        return {"ids": ids, "counts": counts}

    @property
    def table_name(self) -> str:
        """Mem0's collection table, quoted for SQL."""
        return self._table()

    def _table(self, name: str | None = None) -> str:
        return self.engine.dialect.identifier_preparer.quote(name or self.collection)


_stores: dict[tuple[Any, ...], Mem0Store] = {}
_stores_lock = threading.Lock()


def get_store(runtime: Services, collection: str = COLLECTION, default_index: bool | None = None) -> Mem0Store:
    """The shared store for this database, collection and index mode (built on first use)."""
    settings = runtime.settings
    mode = settings.mem0_default_index if default_index is None else default_index
    key = (runtime.engine.url.render_as_string(hide_password=False), collection, mode, history_db_path(settings),
           settings.resolved_provider, settings.extraction_model, settings.embedder,
           settings.llm_timeout_seconds, settings.llm_max_retries)  # the guarded client's limits (llm_guard)
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = Mem0Store(runtime, collection, mode)
        return store

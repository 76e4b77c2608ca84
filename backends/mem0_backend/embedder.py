"""Mem0's embedder is the lab's: one MiniLM per process, one embedding per message.

Mem0 embeds through `Memory.embedding_model` (its public attribute: every call in
mem0/memory/main.py is `self.embedding_model.embed(text, action)` or `.embed_batch`). The
store sets that attribute to `LabEmbedding`, which forwards to the process's shared
embedder (embeddings.get_embedder: the same MiniLM instance and text-hash cache the custom
pipeline uses), so Mem0 neither loads a second copy of the model nor embeds a message the
custom pipeline's recall already embedded. Nothing in Mem0 is edited or patched.

`given(text, vector)` hands Mem0 the turn's precomputed query vector (TurnContext.query_vector):
inside the block, an `embed` of exactly that text on this thread returns the vector as is.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import numpy as np

from embeddings import Embedder, embed_one


class LabEmbedding:
    """Duck-types Mem0's `EmbeddingBase` (embed, embed_batch, config) over a lab `Embedder`."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.config = SimpleNamespace(model=embedder.name, embedding_dims=embedder.dimension)
        self._given = threading.local()
        self.calls = 0
        """How many texts Mem0 asked this object for (given vectors included); tests read it."""

    @contextmanager
    def given(self, text: str, vector: Any) -> Iterator[None]:
        """While inside, `embed(text)` on this thread returns `vector` (None: no effect)."""
        previous = getattr(self._given, "pair", None)
        self._given.pair = None if vector is None else (text, np.asarray(vector, dtype=np.float32))
        try:
            yield
        finally:
            self._given.pair = previous

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        self.calls += 1
        pair = getattr(self._given, "pair", None)
        if pair is not None and pair[0].strip() == text.strip():  # Mem0 strips the query before embedding it
            return pair[1].tolist()
        return embed_one(self.embedder, text).tolist()

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        if not texts:
            return []
        self.calls += len(texts)
        return self.embedder.embed_batch(list(texts)).tolist()

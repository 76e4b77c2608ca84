"""Text embeddings behind one interface: `embed_batch(texts) -> vectors`.

Local MiniLM (384 dims, normalised) is the default because it runs offline; OpenAI
embeddings are the optional alternative. The dimension is known without loading a model
so the database schema can be checked at start.
"""

from __future__ import annotations

import functools
from typing import Protocol

import numpy as np

from embeddings.cache import CachedEmbedder
from settings import Settings, get_settings


class Embedder(Protocol):
    name: str
    dimension: int

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...

    def warm_up(self) -> None:
        """Load the model now, so the first turn does not pay for it."""
        ...


def embed_one(embedder: Embedder, text: str) -> np.ndarray:
    return embedder.embed_batch([text])[0]


@functools.lru_cache(maxsize=4)
def _cached_embedder(name: str, model: str, base_url: str | None, threads: int) -> Embedder:
    if name == "openai":
        from embeddings.openai_embedder import OpenAIEmbedder

        return CachedEmbedder(OpenAIEmbedder(get_settings()))
    from embeddings.local import LocalMiniLM

    return CachedEmbedder(LocalMiniLM(threads=threads))


def get_embedder(settings: Settings | None = None) -> Embedder:
    """One embedder per configuration per process: the local model loads once and every
    backend (Mem0 included, see backends/mem0_backend/embedder.py) shares it, and a text
    embedded once is not embedded again while it stays in the cache (embeddings/cache.py)."""
    settings = settings or get_settings()
    return _cached_embedder(settings.embedder, settings.openai_embedding_model, settings.openai_base_url,
                            settings.embedder_threads)

"""OpenAI (or any OpenAI-compatible) embeddings, the optional alternative to local MiniLM."""

from __future__ import annotations

import numpy as np

from settings import Settings

KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class OpenAIEmbedder:
    name = "openai"

    def __init__(self, settings: Settings) -> None:
        from openai import OpenAI

        self.model = settings.openai_embedding_model
        self.dimension = KNOWN_DIMENSIONS.get(self.model, 1536)
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused"
        self._client = OpenAI(api_key=key, base_url=settings.openai_base_url, timeout=settings.llm_timeout_seconds)

    def warm_up(self) -> None:
        """Nothing to load: the model runs at the endpoint."""

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        response = self._client.embeddings.create(model=self.model, input=texts)
        vectors = np.asarray([item.embedding for item in response.data], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

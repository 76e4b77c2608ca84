"""The message's embedding, computed once per turn, before the turn reaches the backends.

Every backend that recalls by vector (the custom pipeline, Mem0) reads
`TurnContext.query_vector` instead of embedding the message itself, so a lab turn through
four backends runs MiniLM once, before the parallel dispatch, rather than twice inside it
with the two embeddings fighting for the same 2 cores. An incognito turn recalls nothing,
so nothing is embedded for it.
"""

from __future__ import annotations

from backends.base import TurnContext
from embeddings import Embedder, embed_one


def with_query_vector(context: TurnContext, embedder: Embedder) -> TurnContext:
    """The same context with its message embedded (unchanged when it already is, or incognito)."""
    if context.query_vector is not None or context.knobs.incognito:
        return context
    return context.model_copy(update={"query_vector": embed_one(embedder, context.text)})

"""One MiniLM per process, one embedding per message: Mem0 embeds through the lab's embedder,
a turn's precomputed query vector reaches Mem0's search, and a whole lab turn (every
backend, then its background jobs) runs the model on the user's message exactly once."""

from __future__ import annotations

import gc
import uuid

import numpy as np
from sentence_transformers import SentenceTransformer

from backends.base import Knobs, TurnContext
from backends.mem0_backend.embedder import LabEmbedding
from backends.registry import backend_names, build_backend
from jobs.runner import drain
from tests.mem0.conftest import chat_and_add
from ui.parallel import run_parallel


class Counting:
    """Wraps the cache's inner model and records every text that reaches it."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dimension, self.asked = inner, inner.name, inner.dimension, []

    def embed_batch(self, texts):
        self.asked.extend(texts)
        return self.inner.embed_batch(texts)

    def warm_up(self):
        self.inner.warm_up()


def counting(runtime, monkeypatch) -> Counting:
    counter = Counting(runtime.embedder.inner)
    monkeypatch.setattr(runtime.embedder, "inner", counter)
    return counter


def test_mem0_embeds_with_the_processs_one_minilm(mem0_backend, runtime, user_id):
    chat_and_add(mem0_backend, user_id, "My favourite tea is oolong.")  # Mem0 has searched and added by now
    model = mem0_backend.store.memory.embedding_model
    assert isinstance(model, LabEmbedding) and model.embedder is runtime.embedder
    loaded = [obj for obj in gc.get_objects() if isinstance(obj, SentenceTransformer)]
    assert len(loaded) == 1, f"{len(loaded)} SentenceTransformer instances in the process"
    vector = np.asarray(model.embed("My favourite tea is oolong.", "search"))
    np.testing.assert_allclose(vector, runtime.embedder.embed_batch(["My favourite tea is oolong."])[0], atol=1e-6)


def test_a_precomputed_query_vector_is_used_and_nothing_is_embedded(mem0_backend, runtime, user_id, monkeypatch):
    chat_and_add(mem0_backend, user_id, "I keep bees in my garden.")
    question = f"Which insects do I look after? ({uuid.uuid4().hex[:6]})"
    vector = runtime.embedder.embed_batch([question])[0]
    runtime.embedder.clear()  # the vector is now known only to the caller
    counter = counting(runtime, monkeypatch)
    knobs = Knobs(min_similarity=0.0)
    given = mem0_backend.prepare_turn(TurnContext(user_id=user_id, text=question, knobs=knobs, query_vector=vector))
    assert counter.asked == []
    computed = mem0_backend.prepare_turn(TurnContext(user_id=user_id, text=question, knobs=knobs))
    assert counter.asked == [question]
    assert [(n.memory_id, round(n.similarity, 5)) for n in given.notes] == [
        (n.memory_id, round(n.similarity, 5)) for n in computed.notes]
    assert given.notes and "bees" in given.notes[0].content.lower()


def test_a_lab_turn_embeds_the_message_once_across_backends_and_jobs(runtime, make_user, monkeypatch):
    backends = {name: build_backend(name, runtime) for name in backend_names()}
    user = make_user("once")
    message = f"I play the oboe in a band called Reed{uuid.uuid4().hex[:4]}."
    counter = counting(runtime, monkeypatch)
    results = run_parallel(backends, TurnContext(user_id=user, text=message), embedder=runtime.embedder)
    assert all(result.error is None for result in results.values()), {n: r.error for n, r in results.items()}
    drain(runtime, user_id=user)  # custom extraction and Mem0's add, in this process
    assert counter.asked.count(message) == 1, counter.asked
    vector_context_backends = {name for name, backend in backends.items() if backend.recalls_by_vector}
    assert vector_context_backends == {"custom", "mem0"}
    assert backends["custom"].list_memories(user) and backends["mem0"].list_memories(user)  # the jobs did run

"""The lab's parallel turn embeds the message once, hands the vector to the backends that
recall by vector, and does not make the others wait for it."""

from __future__ import annotations

import threading

import numpy as np

from backends.base import MemoryBackend, Recall, TurnContext, TurnResult
from ui.parallel import run_parallel


class SlowEmbedder:
    name, dimension = "slow", 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()

    def embed_batch(self, texts):
        self.calls.append(list(texts))
        assert self.release.wait(10), "the backend that needs no vector never started"
        return np.ones((len(texts), 3), dtype=np.float32)

    def warm_up(self) -> None: ...


class Recorder(MemoryBackend):
    label = description = ""

    def __init__(self, name: str, by_vector: bool, embedder: SlowEmbedder) -> None:
        self.name, self.recalls_by_vector, self.embedder = name, by_vector, embedder
        self.seen = None

    def prepare_turn(self, context: TurnContext) -> Recall:
        self.seen = context.query_vector
        if not self.recalls_by_vector:
            self.embedder.release.set()  # runs while the message is still being embedded
        return Recall()

    def run_turn(self, context, recall, on_text=None) -> TurnResult:
        return TurnResult(backend=self.name, reply="ok", model_label="test")

    def new_conversation(self, user_id): ...
    def list_memories(self, user_id, include_inactive=False): return []
    def erase_user(self, user_id): ...


def test_vector_backends_get_the_one_embedding_and_the_others_do_not_wait():
    embedder = SlowEmbedder()
    backends = {"a": Recorder("a", True, embedder), "b": Recorder("b", False, embedder), "c": Recorder("c", True, embedder)}
    results = run_parallel(backends, TurnContext(user_id="u-parallel", text="Where do I live?"), embedder=embedder)
    assert list(results) == ["a", "b", "c"] and all(r.reply == "ok" for r in results.values())
    assert embedder.calls == [["Where do I live?"]]
    assert backends["a"].seen is not None and backends["c"].seen is not None and backends["b"].seen is None

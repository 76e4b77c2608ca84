"""The process's embedder embeds a text once: the LRU in front of MiniLM (embeddings/cache.py).

A fake inner model counts what it is asked, so the tests see exactly which texts reach it."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from embeddings.cache import CachedEmbedder


class CountingModel:
    name, dimension = "counting", 4

    def __init__(self, delay: float = 0.0) -> None:
        self.asked: list[str] = []
        self.delay = delay
        self._lock = threading.Lock()

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.asked.extend(texts)
        time.sleep(self.delay)
        return np.asarray([[len(t), t.count("a"), 1.0, 0.0] for t in texts], dtype=np.float32)

    def warm_up(self) -> None:
        self.embed_batch(["warm-up"])


def test_a_text_reaches_the_model_once_and_its_vector_is_reused():
    model = CountingModel()
    cache = CachedEmbedder(model)
    first = cache.embed_batch(["banana split", "apple"])
    again = cache.embed_batch(["apple", "banana split", "cherry"])
    assert model.asked == ["banana split", "apple", "cherry"]
    np.testing.assert_array_equal(first[0], again[1])
    np.testing.assert_array_equal(first[1], again[0])
    assert (cache.hits, cache.misses) == (2, 3)


def test_duplicates_in_one_batch_are_embedded_once_and_keep_their_positions():
    model = CountingModel()
    vectors = CachedEmbedder(model).embed_batch(["aa", "b", "aa"])
    assert model.asked == ["aa", "b"]
    assert vectors.shape == (3, 4) and vectors[0][1] == 2 and vectors[1][1] == 0 and vectors[2][1] == 2


def test_concurrent_requests_for_one_text_run_the_model_once():
    model = CountingModel(delay=0.2)
    cache = CachedEmbedder(model)
    results: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: results.append(cache.embed_batch(["same message"])[0])) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert model.asked == ["same message"]
    assert len(results) == 4 and all(np.array_equal(r, results[0]) for r in results)


def test_the_oldest_entry_is_evicted_and_keys_hold_no_text():
    model = CountingModel()
    cache = CachedEmbedder(model, max_entries=2)
    cache.embed_batch(["one"])
    cache.embed_batch(["two"])
    cache.embed_batch(["one"])  # touch: "two" is now the oldest
    cache.embed_batch(["three"])
    assert cache.cached("two") is None and cache.cached("one") is not None and cache.cached("three") is not None
    assert all(isinstance(key, bytes) and len(key) == 32 for key in cache._vectors)  # SHA-256 digests only


def test_a_caller_changing_its_vectors_does_not_change_the_cached_ones():
    cache = CachedEmbedder(CountingModel())
    vectors = cache.embed_batch(["kept intact"])
    vectors[0][0] = 99.0
    assert cache.embed_batch(["kept intact"])[0][0] == len("kept intact")


def test_a_failing_model_call_is_not_cached_and_the_next_call_retries():
    class Flaky(CountingModel):
        fail = True

        def embed_batch(self, texts):
            if self.fail:
                self.fail = False
                raise RuntimeError("model not loaded")
            return super().embed_batch(texts)

    model = Flaky()
    cache = CachedEmbedder(model)
    with pytest.raises(RuntimeError):
        cache.embed_batch(["retry me"])
    assert cache.embed_batch(["retry me"]).shape == (1, 4)
    assert model.asked == ["retry me"]


def test_the_process_embedder_is_cached_minilm(runtime):
    assert isinstance(runtime.embedder, CachedEmbedder)
    assert runtime.embedder.inner.name == "local-minilm" and runtime.embedder.dimension == 384

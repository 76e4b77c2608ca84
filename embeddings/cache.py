"""One embedding per text per process: a bounded LRU in front of the embedder.

Why an in-process LRU keyed by the text's hash, rather than the message's vector kept on
its `messages` row: in a lab turn the same message is embedded by the custom pipeline's
recall, by Mem0's search and, moments later, by the extraction job (which looks up the
user's nearest existing memories for the same text); all of them run in the lab process
(the scheduler drains this user's jobs right after the turn). A cache catches every one of
those calls without a schema change, without the turn having to hand a vector to a job
(job payloads hold ids only), and without a 1.5 KB float column on every message row that
erasure and `pg_stats` would then have to scrub too. A separate worker process misses the
cache and embeds once more, off the request path (about 14 ms), which is the price of not
storing it.

Keys are SHA-256 digests, so the cache holds no user text; each call gets its own copy
of the vectors (stored ones are read-only), so no caller changes another's. Concurrent
requests for the same text (the parallel turn's backends) wait for the first one's
result instead of each running the model: `embed_batch` computes only the texts nobody has or is computing. Hand-written
because `functools.lru_cache` would key on the text itself (user text kept in memory),
works one text at a time, and lets concurrent callers compute the same vector twice.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from concurrent.futures import Future

import numpy as np

DEFAULT_ENTRIES = 2048
"""384-d float32 vectors: about 3 MB at most; a lab session has far fewer distinct texts."""


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """An `Embedder` that remembers its last `max_entries` vectors (same interface)."""

    def __init__(self, inner, max_entries: int = DEFAULT_ENTRIES) -> None:  # noqa: ANN001 - an Embedder
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.max_entries = max_entries
        self._vectors: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._pending: dict[bytes, Future[np.ndarray]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    # -- the Embedder interface ---------------------------------------------------------
    def embed_batch(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = [text_key(text) for text in texts]
        found, waiting, mine = self._plan(keys)
        if mine:
            found.update(self._compute(texts, keys, mine))
        for key, future in waiting.items():
            found[key] = future.result()
        return np.stack([found[key] for key in keys])

    # -- inspection ---------------------------------------------------------------------
    def cached(self, text: str) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.get(text_key(text))
        return vector

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()

    def warm_up(self) -> None:
        """Load the model now (the first call otherwise pays for it), without caching anything."""
        self.inner.warm_up()

    # -- internals ----------------------------------------------------------------------
    def _plan(self, keys: list[bytes]) -> tuple[dict[bytes, np.ndarray], dict[bytes, Future], list[bytes]]:
        """Split keys into cached, being computed by another thread, and ours to compute."""
        found: dict[bytes, np.ndarray] = {}
        waiting: dict[bytes, Future] = {}
        mine: list[bytes] = []
        with self._lock:
            for key in dict.fromkeys(keys):
                if key in self._vectors:
                    self._vectors.move_to_end(key)
                    found[key] = self._vectors[key]
                    self.hits += 1
                elif key in self._pending:
                    waiting[key] = self._pending[key]
                    self.hits += 1
                else:
                    self._pending[key] = Future()
                    mine.append(key)
                    self.misses += 1
        return found, waiting, mine

    def _compute(self, texts: list[str], keys: list[bytes], mine: list[bytes]) -> dict[bytes, np.ndarray]:
        first_text = {key: text for key, text in zip(reversed(keys), reversed(texts))}
        try:
            vectors = self.inner.embed_batch([first_text[key] for key in mine])
        except BaseException as error:
            with self._lock:
                futures = [self._pending.pop(key) for key in mine]
            for future in futures:
                future.set_exception(error)
            raise
        return {key: self._store(key, np.asarray(vector, dtype=np.float32)) for key, vector in zip(mine, vectors)}

    def _store(self, key: bytes, vector: np.ndarray) -> np.ndarray:
        vector = vector.copy()
        vector.setflags(write=False)
        with self._lock:
            self._vectors[key] = vector
            self._vectors.move_to_end(key)
            while len(self._vectors) > self.max_entries:
                self._vectors.popitem(last=False)
            future = self._pending.pop(key, None)
        if future is not None:
            future.set_result(vector)
        return vector

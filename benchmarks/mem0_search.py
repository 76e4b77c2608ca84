"""Mem0 search at scale: does a user's search return its real top-k, and at what latency?

One run builds a Mem0 collection of N rows over many users (rows in Mem0's own format,
random unit vectors, bulk-loaded with COPY: calling `add` 100k times would take hours),
then measures, for a small and a large user, every index configuration on the SAME rows:

  default HNSW      Mem0's stock table: HNSW index, user filter applied after the scan
  HNSW iterative    the same index with `hnsw.iterative_scan = relaxed_order` (pgvector's
                    default bound: at most 20,000 index tuples per scan)
  HNSW iterative, unbounded   strict order, no tuple bound: complete, at a price
  exact, no index   no HNSW: every search scans the whole table
  exact + user idx  no HNSW, a B-tree on (payload->>'user_id'): the lab's configuration

For each: recall (how many of the brute-force top-8 over the user's own vectors Mem0's
search returns, averaged over 20 queries), the latency of Mem0's SQL alone (its
`vector_store.search`, top 60 as Mem0 over-fetches) and of Mem0's whole `search` (query
embedding, keyword search, scoring), with p50 ratios against the default.

    python -m benchmarks.mem0_search                 # 100k rows over 200 users
    python -m benchmarks.mem0_search --rows 20000    # quicker

Random vectors are HNSW's worst case (every distance is about equal), so the HNSW rows'
recall here is pessimistic next to real embeddings: DESIGN.md measured relaxed_order at
159 of 160 with MiniLM rows. What random vectors do not change: the stock index returns
almost nothing for a small user (the user filter runs after a 40-candidate graph scan),
and only a scan without the HNSW index is exact by construction.

The table helpers are reused by tests/mem0/test_mem0_scale.py.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np
from psycopg.types.json import Jsonb
from sqlalchemy import Engine, text

from backends.base import Knobs, TurnContext
from backends.custom.backend import CustomPipelineBackend
from backends.mem0_backend.config import CUSTOM_PLANS, connection_string
from backends.mem0_backend import indexes
from backends.mem0_backend.store import Mem0Store, get_store
from benchmarks.figures import Figure, percentile
from benchmarks.isolated import isolate
from benchmarks.recall_latency import load_rows, unit_vectors
from scratch import scratch_runtime

QUERIES = [
    "What food do I like?", "Where do I live?", "What is my job?", "Do I have any pets?",
    "What are my hobbies?", "Which languages do I speak?", "What music do I listen to?",
    "Where did I go on holiday last year?", "What is my partner's name?", "What sports do I play?",
    "What car do I drive?", "What am I allergic to?", "What is my favourite book?",
    "When is my birthday?", "What did I study at university?", "What time do I wake up?",
    "What project am I working on?", "Which city was I born in?", "What do I drink in the morning?",
    "How do I get to work?",
]
"""20 questions; no row text shares their words, so Mem0's keyword (BM25) score stays 0
and its ranking is the cosine ranking the brute force computes."""

TOP_K = 8
MEM0_SQL_LIMIT = 60  # Mem0's search asks its store for max(4 * top_k, 60) candidates


@dataclass
class Layout:
    """Users and how many rows each owns."""

    sizes: dict[str, int]

    @property
    def rows(self) -> int:
        return sum(self.sizes.values())


def layout(rows: int, users: int, probes: dict[str, int]) -> Layout:
    """`probes` (user -> row count) plus filler users sharing the rest evenly."""
    rest, fillers = rows - sum(probes.values()), users - len(probes)
    sizes = dict(probes)
    for index in range(fillers):
        sizes[f"filler-{index:04d}"] = rest // fillers + (1 if index < rest % fillers else 0)
    return Layout(sizes)


def _payload(user_id: str, index: int, created: str) -> dict[str, Any]:
    """A row as Mem0's add writes it (see mem0/memory/main.py, phase 4)."""
    data = f"note {index} kept for {user_id}"
    return {"user_id": user_id, "data": data, "text_lemmatized": data, "hash": hashlib.md5(data.encode()).hexdigest(),
            "created_at": created, "updated_at": created}


def _rows(spec: Layout, dimension: int, seed: int) -> Iterator[tuple[uuid.UUID, np.ndarray, Jsonb]]:
    rng = np.random.default_rng(seed)
    created = datetime.now(timezone.utc).isoformat()
    owners = [user for user, count in spec.sizes.items() for _ in range(count)]
    rng.shuffle(owners)  # users' rows interleave in the heap, as real traffic would leave them
    for start in range(0, len(owners), 5000):
        chunk = owners[start:start + 5000]
        vectors = rng.standard_normal((len(chunk), dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for offset, (user, vector) in enumerate(zip(chunk, vectors)):
            yield uuid.UUID(bytes=rng.bytes(16), version=4), vector, Jsonb(_payload(user, start + offset, created))


def load(engine: Engine, table: str, spec: Layout, dimension: int, seed: int = 7) -> float:
    """Bulk-load the rows into an existing (empty) Mem0 table with binary COPY; returns seconds."""
    started = time.perf_counter()
    quoted = engine.dialect.identifier_preparer.quote(table)
    raw = engine.raw_connection()  # pgvector's types are registered on every connection (db/engine.py)
    try:
        connection = raw.driver_connection
        with connection.cursor() as cursor:
            with cursor.copy(f"COPY {quoted} (id, vector, payload) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["uuid", "vector", "jsonb"])
                for row in _rows(spec, dimension, seed):
                    copy.write_row(row)
        connection.commit()
    finally:
        raw.close()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(f"VACUUM ANALYZE {quoted}"))
    return time.perf_counter() - started


def user_vectors(engine: Engine, table: str, user_id: str) -> tuple[list[str], np.ndarray]:
    quoted = engine.dialect.identifier_preparer.quote(table)
    with engine.connect() as connection:
        rows = connection.execute(text(f"SELECT id, vector FROM {quoted} WHERE payload->>'user_id' = :u"), {"u": user_id}).all()
    return [str(row[0]) for row in rows], np.asarray([row[1].to_numpy() for row in rows], dtype=np.float32)


def brute_force_top(ids: list[str], matrix: np.ndarray, query: np.ndarray, k: int = TOP_K) -> list[str]:
    """The true top-k by cosine over the user's own vectors (all unit length)."""
    query = np.asarray(query, dtype=np.float32)
    scores = matrix @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-scores)[:k]]


@dataclass
class Measured:
    recall: list[int] = field(default_factory=list)
    sql_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)


def measure(store: Any, vector_store: Any, user_id: str, truth: tuple[list[str], np.ndarray], queries: list[str]) -> Measured:
    """Recall of the backend's search and latencies of Mem0's SQL and Mem0's whole search."""
    result = Measured()
    embed = store.memory.embedding_model.embed
    for query in queries:
        vector = embed(query, "search")
        started = time.perf_counter()
        vector_store.search(query=query, vectors=vector, top_k=MEM0_SQL_LIMIT, filters={"user_id": user_id})
        result.sql_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        hits = store.search(user_id, query, top_k=TOP_K)
        result.search_ms.append((time.perf_counter() - started) * 1000)
        result.recall.append(len({hit.id for hit in hits} & set(brute_force_top(*truth, vector))))
    return result


# -- the benchmark run ---------------------------------------------------------------------
CONFIGS = ("exact + user idx", "exact, no index", "default HNSW", "HNSW iterative", "HNSW iterative, unbounded")
OPTIONS = {  # libpq `options`: session settings of each configuration's connections
    "exact + user idx": CUSTOM_PLANS,
    "exact, no index": CUSTOM_PLANS,
    "default HNSW": "",  # Mem0 as shipped
    "HNSW iterative": "-c hnsw.iterative_scan=relaxed_order",  # stops after hnsw.max_scan_tuples = 20,000
    # The bound that guarantees the top-k: let the scan visit the whole index if it must.
    "HNSW iterative, unbounded": "-c hnsw.iterative_scan=strict_order -c hnsw.max_scan_tuples=100000000 "
                                 "-c hnsw.scan_mem_multiplier=100",
}


def _vector_store(store: Any, options: str) -> Any:
    """Mem0's pgvector store on the same table, with other session settings."""
    config = store.memory.config.vector_store.config.model_dump()
    config.update(connection_string=connection_string(store.engine, options=options), connection_pool=None)
    return type(store.memory.vector_store)(**config)  # what Mem0's VectorStoreFactory does


def _set_indexes(engine: Engine, table: str, config: str) -> float:
    """Put the table in this configuration's index layout; returns build seconds."""
    started = time.perf_counter()
    if config == "exact, no index":
        with engine.begin() as connection:
            connection.execute(text(f'DROP INDEX IF EXISTS "{table}{indexes.USER_INDEX_SUFFIX}"'))
            connection.execute(text(f'DROP INDEX IF EXISTS "{table}{indexes.HNSW_INDEX_SUFFIX}"'))
    else:
        indexes.ensure_layout(engine, table, default_index=config.startswith(("default", "HNSW")))
    return time.perf_counter() - started


def run(rows: int, users: int, small: int, large: int, seed: int) -> None:
    isolate()
    runtime = scratch_runtime()
    table = f"mem0_bench_{uuid.uuid4().hex[:8]}"
    spec = layout(rows, users, {"probe-small": small, "probe-large": large})
    store = Mem0Store(runtime, collection=table, default_index=False)
    try:
        print(f"table {table}: {spec.rows} rows over {len(spec.sizes)} users; loaded in {load(runtime.engine, table, spec, runtime.embedder.dimension, seed):.1f} s")
        truths = {user: user_vectors(runtime.engine, table, user) for user in ("probe-small", "probe-large")}
        results: dict[tuple[str, str], Measured] = {}
        for config in CONFIGS:
            build_s = _set_indexes(runtime.engine, table, config)
            options = OPTIONS[config]
            vector_store = _vector_store(store, options)
            original, store.memory.vector_store = store.memory.vector_store, vector_store
            try:
                for user, truth in truths.items():
                    measure(store, vector_store, user, truth, QUERIES[:3])  # warm the cache and the pool
                    results[(config, user)] = measure(store, vector_store, user, truth, QUERIES)
            finally:
                store.memory.vector_store = original
            print(f"  {config}: index build {build_s:.1f} s")
        _print_table(results, spec)
    finally:
        with runtime.engine.begin() as connection:
            connection.execute(text(f'DROP TABLE IF EXISTS "{table}"'))


def _print_table(results: dict[tuple[str, str], Measured], spec: Layout) -> None:
    print(f"\n| config | user (rows) | recall of top-{TOP_K} (mean over {len(QUERIES)}) | SQL p50 ms | SQL p95 ms | "
          "search p50 ms | search p95 ms | SQL p50 vs default | search p50 vs default |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (config, user), m in results.items():
        default = results[("default HNSW", user)]
        sql_ratio = statistics.median(m.sql_ms) / statistics.median(default.sql_ms)
        search_ratio = statistics.median(m.search_ms) / statistics.median(default.search_ms)
        print(f"| {config} | {user} ({spec.sizes[user]}) | {statistics.mean(m.recall):.2f} of {TOP_K} | "
              f"{percentile(m.sql_ms, 50):.1f} | {percentile(m.sql_ms, 95):.1f} | {percentile(m.search_ms, 50):.1f} | "
              f"{percentile(m.search_ms, 95):.1f} | {sql_ratio:.2f}x | {search_ratio:.2f}x |")


# -- custom vs Mem0 on the same memories (the benchmark command's figures) ---------------------
def load_user_vectors(engine: Engine, table: str, user_id: str, vectors: np.ndarray) -> None:
    """One user's vectors into Mem0's table, in Mem0's row format (binary COPY)."""
    created = datetime.now(timezone.utc).isoformat()
    quoted = engine.dialect.identifier_preparer.quote(table)
    raw = engine.raw_connection()
    try:
        connection = raw.driver_connection
        with connection.cursor() as cursor:
            with cursor.copy(f"COPY {quoted} (id, vector, payload) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["uuid", "vector", "jsonb"])
                for index, vector in enumerate(vectors):
                    copy.write_row((uuid.uuid4(), vector, Jsonb(_payload(user_id, index, created))))
        connection.commit()
    finally:
        raw.close()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(f"VACUUM ANALYZE {quoted}"))


def compare(runtime: Any, sizes: tuple[int, ...], filler_rows: int, queries: int, seed: int = 11) -> dict[int, tuple[list[float], list[float]]]:
    """Per user size: (Mem0 search ms, custom recall ms), same vectors, query vector given to both."""
    store = get_store(runtime)
    backend = CustomPipelineBackend(runtime)
    rng = np.random.default_rng(seed)
    dimension = runtime.embedder.dimension
    load(runtime.engine, store.collection, layout(filler_rows, 50, {}), dimension, seed)
    knobs = Knobs.from_settings(runtime.settings, min_similarity=-1.0, top_k=TOP_K)
    results = {}
    for size in sizes:
        user_id = runtime.store.ensure_user(f"bench-same-{uuid.uuid4().hex[:6]}-{size}")
        vectors = unit_vectors(rng, size, dimension)
        with runtime.engine.begin() as connection:
            connection.execute(text("DELETE FROM users WHERE id = :u"), {"u": user_id})  # load_rows inserts it again
        load_rows(runtime.engine, user_id, vectors, datetime.now(timezone.utc))
        load_user_vectors(runtime.engine, store.collection, user_id, vectors)
        texts = [f"{QUERIES[i % len(QUERIES)]} [{size}-{i}]" for i in range(queries)]
        query_vectors = dict(zip(texts, runtime.embedder.embed_batch(texts)))
        mem0_ms, custom_ms = [], []
        for text_ in texts[:3] + texts:  # the first three warm the pools and plans
            started = time.perf_counter()
            store.search(user_id, text_, top_k=TOP_K, vector=query_vectors[text_])
            mem0_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            backend.prepare_turn(TurnContext(user_id=user_id, text=text_, knobs=knobs, query_vector=query_vectors[text_]))
            custom_ms.append((time.perf_counter() - started) * 1000)
        results[size] = (mem0_ms[3:], custom_ms[3:])
    return results


def figures(runtime: Any, quick: bool) -> list[Figure]:
    results = compare(runtime, (50, 5000), 20_000 if quick else 100_000, 30 if quick else 100)
    out = []
    for size, (mem0_ms, custom_ms) in results.items():
        out.append(Figure(f"Mem0 search p50 (query vector given), {size:,}-memory user", percentile(mem0_ms, 50), "ms",
                          baseline="custom recall, same vectors", baseline_value=percentile(custom_ms, 50)))
        out.append(Figure(f"Mem0 search p95 (query vector given), {size:,}-memory user", percentile(mem0_ms, 95), "ms",
                          baseline="custom recall p95", baseline_value=percentile(custom_ms, 95)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--small", type=int, default=50, help="rows of the small probe user")
    parser.add_argument("--large", type=int, default=5_000, help="rows of the large probe user")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    run(args.rows, args.users, args.small, args.large, args.seed)


if __name__ == "__main__":
    main()

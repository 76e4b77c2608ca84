"""Recall query latency: the exact per-user pgvector query vs numpy brute force on the same vectors.

    .venv/bin/python benchmarks/recall_latency.py [--rows 100000] [--sizes 100,1000,5000] [--queries 200]

Builds its database on scratch storage (scratch.py: never the lab's data), fills `memories`
with M random unit vectors spread over many users, gives one user N live memories per
size, then times `db.queries.nearest_live_memories` (the query recall runs, top-30) and a
numpy brute-force top-30 over that user's vectors held in memory. Both run in the same
process on the same vectors; the table also checks the two return the same ids (exact
search). The vectors are random rather than MiniLM sentences: latency depends on the row
count and dimension, not on the text, and random vectors make a 100k-row table in seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from the repo root

from sqlalchemy import Engine, text  # noqa: E402

from db.queries import explain_nearest, nearest_live_memories  # noqa: E402

TOP_K = 30
FILLER_ROWS_PER_USER = 500


def unit_vectors(rng: np.random.Generator, count: int, dimension: int) -> np.ndarray:
    vectors = rng.standard_normal((count, dimension), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def load_rows(engine: Engine, user_id: str, vectors: np.ndarray, now: datetime) -> list[uuid.UUID]:
    """Binary COPY (pgvector's psycopg dumper) of one user's rows: far faster than INSERTs."""
    ids = [uuid.uuid4() for _ in range(len(vectors))]
    raw = engine.raw_connection()
    try:
        with raw.cursor() as cursor:
            cursor.execute("INSERT INTO users (id, display_name, created_at) VALUES (%s, %s, %s)", (user_id, user_id, now))
            with cursor.copy("COPY memories (id, user_id, lineage_id, kind, content, embedding, importance, evidence, created_at) "
                             "FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["uuid", "varchar", "uuid", "varchar", "text", "vector", "float8", "text", "timestamptz"])
                for memory_id, vector in zip(ids, vectors):
                    copy.write_row((memory_id, user_id, memory_id, "semantic", "benchmark row", vector, 0.5, "benchmark", now))
        raw.commit()
    finally:
        raw.close()
    return ids


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(samples_ms, 50)), float(np.percentile(samples_ms, 95))


def numpy_top(matrix: np.ndarray, ids: list[uuid.UUID], query: np.ndarray) -> list[str]:
    scores = matrix @ query
    top = np.argpartition(-scores, min(TOP_K, len(scores) - 1))[:TOP_K]
    return [str(ids[i]) for i in top[np.argsort(-scores[top])]]


def time_both(engine: Engine, user_id: str, matrix: np.ndarray, ids: list[uuid.UUID], queries: np.ndarray,
              now: datetime) -> tuple[list[float], list[float], float]:
    """Interleaved, query by query, so both see the same machine load (2 shared cores).

    numpy runs on one BLAS thread, like one Postgres backend: on a loaded 2-core machine a
    multi-threaded matvec mostly measures thread contention.
    """
    pg_ms, np_ms, overlap = [], [], []
    with engine.connect() as connection, threadpool_limits(1):
        nearest_live_memories(connection, user_id, queries[0], now, TOP_K)  # warm the connection and the plan
        for query in queries:
            started = time.perf_counter()
            rows = nearest_live_memories(connection, user_id, query, now, TOP_K)
            pg_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            expected = numpy_top(matrix, ids, query)
            np_ms.append((time.perf_counter() - started) * 1000)
            overlap.append(len({memory_id for memory_id, _ in rows} & set(expected)) / len(expected))
    return pg_ms, np_ms, float(np.mean(overlap))


class Precomputed:
    """An embedder that returns vectors computed beforehand: isolates recall's database and
    scoring work from MiniLM, whose latency under load is measured separately."""

    def __init__(self, embedder, texts: list[str]) -> None:  # noqa: ANN001 - an Embedder
        self.name, self.dimension = "precomputed", embedder.dimension
        self.vectors = dict(zip(texts, embedder.embed_batch(texts)))

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[text_] for text_ in texts])


def time_embedding(runtime, texts: list[str]) -> list[float]:  # noqa: ANN001 - a Runtime
    from embeddings import embed_one

    samples = []
    for text_ in texts:
        started = time.perf_counter()
        embed_one(runtime.embedder, text_)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def time_recall(runtime, user_id: str, texts: list[str]) -> list[float]:  # noqa: ANN001 - a Runtime
    """recall() as a turn runs it, minus the query embedding: the query, row fetch, scoring, last_used_at UPDATE."""
    from backends.base import Knobs
    from backends.custom.recall import recall

    embedder = Precomputed(runtime.embedder, sorted(set(texts)))
    knobs = Knobs.from_settings(runtime.settings, min_similarity=-1.0)  # inject top_k: the last_used_at UPDATE runs too
    return [recall(runtime.engine, embedder, user_id, text_, knobs, runtime.clock.now(), runtime.settings.importance_weight).recall_ms
            for text_ in texts]


QUESTIONS = ["What should I cook for dinner tonight?", "hello", "Any tips for my trip next week?",
             "How do I fix a borrow checker error in Rust?", "What gift should I buy for my daughter?"]


def main() -> None:
    parser = argparse.ArgumentParser(description="Recall query latency vs numpy brute force")
    parser.add_argument("--rows", type=int, default=100_000, help="M: total rows in the memories table")
    parser.add_argument("--sizes", default="100,1000,5000", help="N: live memories of the measured users")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    from scratch import scratch_runtime

    started = time.perf_counter()
    runtime = scratch_runtime(llm_provider="offline", embedder="local")  # scratch data: never the lab's
    engine, dimension = runtime.engine, runtime.embedder.dimension
    rng = np.random.default_rng(args.seed)
    now = datetime.now(timezone.utc)

    measured: dict[int, tuple[str, np.ndarray, list[uuid.UUID]]] = {}
    for size in sizes:
        user_id, vectors = f"bench-n{size}", unit_vectors(rng, size, dimension)
        measured[size] = (user_id, vectors, load_rows(engine, user_id, vectors, now))
    filler = max(args.rows - sum(sizes), 0)
    for index in range((filler + FILLER_ROWS_PER_USER - 1) // FILLER_ROWS_PER_USER):
        count = min(FILLER_ROWS_PER_USER, filler - index * FILLER_ROWS_PER_USER)
        load_rows(engine, f"bench-f{index}", unit_vectors(rng, count, dimension), now)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM ANALYZE memories"))  # current visibility map: index-only scans
        total = connection.execute(text("SELECT count(*) FROM memories")).scalar_one()
        shared_buffers = connection.execute(text("SHOW shared_buffers")).scalar_one()
    print(f"table: {total} rows, {dimension}-d, shared_buffers={shared_buffers}; loaded in {time.perf_counter() - started:.1f} s "
          f"(data dir {data_dir})")
    with engine.connect() as connection:
        plan = explain_nearest(connection, measured[sizes[-1]][0], measured[sizes[-1]][1][0], now, TOP_K)
    print("plan:", " / ".join(line.strip() for line in plan.splitlines() if "Scan" in line or "Limit" in line))

    print(f"\n| user's live rows N | table rows M | pgvector query p50 ms | p95 ms | numpy p50 ms | p95 ms "
          f"| ratio p50 (pg/numpy) | same top-{TOP_K} | recall() w/o embedding p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    texts = (QUESTIONS * (args.queries // len(QUESTIONS) + 1))[: max(args.queries // 4, len(QUESTIONS))]
    for size, (user_id, vectors, ids) in measured.items():
        queries = unit_vectors(rng, args.queries, dimension)
        pg_ms, np_ms, same = time_both(engine, user_id, vectors, ids, queries, now)
        (pg50, pg95), (np50, np95) = percentiles(pg_ms), percentiles(np_ms)
        r50, r95 = percentiles(time_recall(runtime, user_id, texts))
        print(f"| {size} | {total} | {pg50:.2f} | {pg95:.2f} | {np50:.3f} | {np95:.3f} | {pg50 / np50:.1f}x | {same:.3f} "
              f"| {r50:.1f} | {r95:.1f} |")
    e50, e95 = percentiles(time_embedding(runtime, texts))
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    print(f"\nMiniLM query embedding (not in the columns above): p50 {e50:.1f} ms, p95 {e95:.1f} ms; load average {' '.join(load)}")


if __name__ == "__main__":
    main()

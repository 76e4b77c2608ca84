"""Recall query latency: the exact per-user pgvector query vs numpy brute force on the same vectors.

    .venv/bin/python -m benchmarks.recall_latency [--rows 100000] [--sizes 100,1000,5000] [--queries 200]

Builds a fresh embedded Postgres in a temp dir (never the lab's data: benchmarks/isolated.py), fills `memories`
with M random unit vectors spread over many users, gives one user N live memories per
size, then times `db.queries.recall_candidates` (the one statement recall runs, top-30,
no topics asked) and a
numpy brute-force top-30 over that user's vectors held in memory. Both run in the same
process on the same vectors; the table also checks the two return the same ids (exact
search). The vectors are random rather than MiniLM sentences: latency depends on the row
count and dimension, not on the text, and random vectors make a 100k-row table in seconds.
"""

from __future__ import annotations

import argparse
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from sqlalchemy import Engine, text
from threadpoolctl import threadpool_limits

from backends.base import Knobs, TurnContext
from backends.custom.backend import CustomPipelineBackend
from benchmarks.figures import Figure, check, load_average, percentile
from benchmarks.isolated import isolate
from db.queries import recall_candidates
from scratch import scratch_runtime

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
        recall_candidates(connection, user_id, queries[0], now, TOP_K, [], 0)  # warm the connection and the plan
        for query in queries:
            started = time.perf_counter()
            rows = [(row.id, row.similarity) for row in recall_candidates(connection, user_id, query, now, TOP_K, [], 0)]
            pg_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            expected = numpy_top(matrix, ids, query)
            np_ms.append((time.perf_counter() - started) * 1000)
            overlap.append(len({memory_id for memory_id, _ in rows} & set(expected)) / len(expected))
    return pg_ms, np_ms, float(np.mean(overlap))


def time_embedding(runtime, texts: list[str]) -> list[float]:  # noqa: ANN001 - a Runtime
    """MiniLM on texts it has not seen (the cache in front of it is bypassed)."""
    model = getattr(runtime.embedder, "inner", runtime.embedder)
    samples = []
    for text_ in texts:
        started = time.perf_counter()
        model.embed_batch([text_])
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def time_recall(runtime, user_id: str, texts: list[str]) -> list[float]:  # noqa: ANN001 - a Runtime
    """The custom backend's recall as a turn runs it, minus the query embedding: the turn's
    vector is handed over (TurnContext.query_vector) and already in the embedder's cache."""
    vectors = dict(zip(texts, runtime.embedder.embed_batch(texts)))
    backend = CustomPipelineBackend(runtime)
    knobs = Knobs.from_settings(runtime.settings, min_similarity=-1.0)  # inject top_k: the last_used_at write runs too
    samples = []
    for text_ in texts:
        context = TurnContext(user_id=user_id, text=text_, knobs=knobs, query_vector=vectors[text_])
        started = time.perf_counter()
        backend.prepare_turn(context)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


QUESTIONS = ["What should I cook for dinner tonight?", "hello", "Any tips for my trip next week?",
             "How do I fix a borrow checker error in Rust?", "What gift should I buy for my daughter?"]


@dataclass
class SizeResult:
    size: int
    pg_ms: list[float]
    np_ms: list[float]
    same: float
    recall_ms: list[float]


def fill(runtime, rows: int, sizes: list[int], seed: int = 7) -> tuple[dict[int, tuple[str, np.ndarray, list[uuid.UUID]]], int]:  # noqa: ANN001
    """Measured users of the given sizes plus filler users up to `rows` rows; VACUUM ANALYZE."""
    engine, dimension = runtime.engine, runtime.embedder.dimension
    rng = np.random.default_rng(seed)
    now = datetime.now(timezone.utc)
    tag = uuid.uuid4().hex[:6]
    with engine.connect() as connection:
        existing = connection.execute(text("SELECT count(*) FROM memories")).scalar_one()
    measured: dict[int, tuple[str, np.ndarray, list[uuid.UUID]]] = {}
    for size in sizes:
        user_id, vectors = f"bench-{tag}-n{size}", unit_vectors(rng, size, dimension)
        measured[size] = (user_id, vectors, load_rows(engine, user_id, vectors, now))
    filler = max(rows - existing - sum(sizes), 0)
    for index in range((filler + FILLER_ROWS_PER_USER - 1) // FILLER_ROWS_PER_USER):
        count = min(FILLER_ROWS_PER_USER, filler - index * FILLER_ROWS_PER_USER)
        load_rows(engine, f"bench-{tag}-f{index}", unit_vectors(rng, count, dimension), now)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM ANALYZE memories"))  # current visibility map: index-only scans
        total = connection.execute(text("SELECT count(*) FROM memories")).scalar_one()
    return measured, total


def measure(runtime, rows: int, sizes: list[int], queries: int, seed: int = 7) -> tuple[list[SizeResult], int]:  # noqa: ANN001
    measured, total = fill(runtime, rows, sizes, seed)
    rng = np.random.default_rng(seed + 1)
    now = datetime.now(timezone.utc)
    texts = [f"{question} ({number})" for number, question in enumerate(QUESTIONS * (queries // len(QUESTIONS) + 1))]
    texts = texts[: max(queries // 4, len(QUESTIONS))]
    results = []
    for size, (user_id, vectors, ids) in measured.items():
        pg_ms, np_ms, same = time_both(runtime.engine, user_id, vectors, ids, unit_vectors(rng, queries, vectors.shape[1]), now)
        results.append(SizeResult(size, pg_ms, np_ms, same, time_recall(runtime, user_id, texts)))
    return results, total


def figures(runtime, quick: bool) -> list[Figure]:  # noqa: ANN001 - a Runtime
    rows, queries = (20_000, 60) if quick else (1_000_000, 200)
    results, total = measure(runtime, rows, [100, 1000, 5000], queries)
    out = []
    for r in results:
        p50 = percentile(r.pg_ms, 50)
        target, meets = check(p50, "<=", 2.5) if r.size == 5000 else ("-", None)
        out.append(Figure(f"recall SQL p50, {r.size:,}-memory user, {total:,} rows", p50, "ms", target, meets,
                          "numpy brute force, same vectors", percentile(r.np_ms, 50)))
        out.append(Figure(f"recall SQL p95, {r.size:,}-memory user", percentile(r.pg_ms, 95), "ms"))
        out.append(Figure(f"recall SQL top-{TOP_K} equal to numpy's, {r.size:,}-memory user", r.same, "share",
                          *check(r.same, ">=", 1.0)))
        out.append(Figure(f"custom recall without embedding p50, {r.size:,}-memory user", percentile(r.recall_ms, 50), "ms",
                          baseline="its SQL alone", baseline_value=p50))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Recall query latency vs numpy brute force")
    parser.add_argument("--rows", type=int, default=100_000, help="M: total rows in the memories table")
    parser.add_argument("--sizes", default="100,1000,5000", help="N: live memories of the measured users")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    root = isolate()
    runtime = scratch_runtime()
    started = time.perf_counter()
    results, total = measure(runtime, args.rows, [int(size) for size in args.sizes.split(",")], args.queries, args.seed)
    with runtime.engine.connect() as connection:
        shared_buffers = connection.execute(text("SHOW shared_buffers")).scalar_one()
    print(f"table: {total} rows, {runtime.embedder.dimension}-d, shared_buffers={shared_buffers}; "
          f"measured in {time.perf_counter() - started:.1f} s (data dir {root})")
    print(f"\n| user's live rows N | table rows M | pgvector query p50 ms | p95 ms | numpy p50 ms | p95 ms "
          f"| ratio p50 (pg/numpy) | same top-{TOP_K} | recall() w/o embedding p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        pg50, np50 = percentile(r.pg_ms, 50), percentile(r.np_ms, 50)
        print(f"| {r.size} | {total} | {pg50:.2f} | {percentile(r.pg_ms, 95):.2f} | {np50:.3f} | {percentile(r.np_ms, 95):.3f} "
              f"| {pg50 / np50:.1f}x | {r.same:.3f} | {percentile(r.recall_ms, 50):.1f} | {percentile(r.recall_ms, 95):.1f} |")
    embedding = time_embedding(runtime, [f"{q} [{i}]" for i, q in enumerate(QUESTIONS * 8)])
    print(f"\nMiniLM query embedding (not in the columns above): p50 {percentile(embedding, 50):.1f} ms, "
          f"p95 {percentile(embedding, 95):.1f} ms; load average {' '.join(map(str, load_average()))}")


if __name__ == "__main__":
    main()

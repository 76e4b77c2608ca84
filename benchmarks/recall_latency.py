"""Recall query latency: the exact per-user pgvector query vs numpy brute force on the same vectors.

    .venv/bin/python benchmarks/recall_latency.py [--rows 100000] [--sizes 100,1000,5000] [--queries 200]

Builds a fresh embedded Postgres in a temp dir (never the lab's data), fills `memories`
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
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

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


def time_postgres(engine: Engine, user_id: str, queries: np.ndarray, now: datetime) -> tuple[list[float], list[list[str]]]:
    samples, results = [], []
    with engine.connect() as connection:
        nearest_live_memories(connection, user_id, queries[0], now, TOP_K)  # warm the connection and the plan
        for query in queries:
            started = time.perf_counter()
            rows = nearest_live_memories(connection, user_id, query, now, TOP_K)
            samples.append((time.perf_counter() - started) * 1000)
            results.append([memory_id for memory_id, _ in rows])
    return samples, results


def time_numpy(matrix: np.ndarray, ids: list[uuid.UUID], queries: np.ndarray) -> tuple[list[float], list[list[str]]]:
    samples, results = [], []
    for query in queries:
        started = time.perf_counter()
        scores = matrix @ query
        top = np.argpartition(-scores, min(TOP_K, len(scores) - 1))[:TOP_K]
        top = top[np.argsort(-scores[top])]
        samples.append((time.perf_counter() - started) * 1000)
        results.append([str(ids[i]) for i in top])
    return samples, results


def main() -> None:
    parser = argparse.ArgumentParser(description="Recall query latency vs numpy brute force")
    parser.add_argument("--rows", type=int, default=100_000, help="M: total rows in the memories table")
    parser.add_argument("--sizes", default="100,1000,5000", help="N: live memories of the measured users")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    from backends.runtime import build_runtime
    from settings import load_settings

    data_dir = Path(tempfile.mkdtemp(prefix="memory-lab-bench-"))
    started = time.perf_counter()
    runtime = build_runtime(load_settings(data_dir=data_dir, llm_provider="offline", embedder="local"))
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

    print(f"\n| user's live rows N | table rows M | pgvector p50 ms | p95 ms | numpy p50 ms | p95 ms | ratio p50 (pg/numpy) | same top-{TOP_K} |")
    print("|---|---|---|---|---|---|---|---|")
    for size, (user_id, vectors, ids) in measured.items():
        queries = unit_vectors(rng, args.queries, dimension)
        pg_ms, pg_ids = time_postgres(engine, user_id, queries, now)
        np_ms, np_ids = time_numpy(vectors, ids, queries)
        same = np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(pg_ids, np_ids)])
        (pg50, pg95), (np50, np95) = percentiles(pg_ms), percentiles(np_ms)
        print(f"| {size} | {total} | {pg50:.2f} | {pg95:.2f} | {np50:.3f} | {np95:.3f} | {pg50 / np50:.0f}x | {same:.3f} |")


if __name__ == "__main__":
    main()

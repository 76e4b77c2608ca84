"""The schema on the real embedded Postgres: typed vectors, the recall index, no HNSW."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from db.queries import explain_nearest, explain_recall, nearest_live_memories, recall_candidates
from db.schema import embedding_dimension, ensure_schema
from settings import SettingsError


def _unit_vectors(seed: int, count: int) -> np.ndarray:
    """Random unit-length 384-d vectors, the same for a given seed."""
    vectors = np.random.default_rng(seed).normal(size=(count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _insert(connection, user_id: str, vector) -> None:
    connection.execute(
        text(
            "INSERT INTO memories (id, user_id, lineage_id, kind, content, embedding, importance, evidence, created_at) "
            "VALUES (:id, :user_id, :lineage, 'semantic', 'x', :embedding, 0.5, 'x', now())"
        ),
        {"id": uuid.uuid4(), "user_id": user_id, "lineage": uuid.uuid4(), "embedding": np.asarray(vector, dtype=np.float32)},
    )


def test_embedding_column_has_the_embedders_dimension(runtime):
    assert embedding_dimension(runtime.engine) == runtime.embedder.dimension == 384


def test_wrong_length_vector_is_rejected(runtime, user_id):
    with pytest.raises(DBAPIError, match="expected 384 dimensions, not 3"):
        with runtime.engine.begin() as connection:
            _insert(connection, user_id, [0.1, 0.2, 0.3])


def test_a_different_embedder_dimension_is_one_clear_line(runtime):
    with pytest.raises(SettingsError) as raised:
        ensure_schema(runtime.engine, 1536)
    message = str(raised.value)
    assert "\n" not in message
    assert "1536" in message and "vector(384)" in message and "EMBEDDER" in message


def test_no_hnsw_index_on_memories(runtime):
    with runtime.engine.connect() as connection:
        methods = connection.execute(
            text("SELECT am.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                 "JOIN pg_am am ON am.oid = c.relam WHERE i.indrelid = 'memories'::regclass")
        ).scalars().all()
    assert "hnsw" not in methods and "ivfflat" not in methods
    assert set(methods) == {"btree"}


def test_recall_query_uses_the_partial_user_index_and_finds_the_nearest(runtime, user_id, make_user):
    other = make_user("other")
    vectors = _unit_vectors(seed=7, count=40)
    with runtime.engine.begin() as connection:
        for vector in vectors:
            _insert(connection, user_id, vector)
            _insert(connection, other, -vector)
        connection.execute(text("ANALYZE memories"))
    now = runtime.clock.now()
    with runtime.engine.connect() as connection:
        connection.execute(text("SET enable_seqscan = off"))  # a tiny table would otherwise be scanned whole
        plan = explain_nearest(connection, user_id, vectors[3], now, 5)
        hits = nearest_live_memories(connection, user_id, vectors[3], now, 5)
    assert "memories_live_by_user" in plan
    assert "hnsw" not in plan.lower()
    assert len(hits) == 5
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    brute = np.sort(vectors @ vectors[3])[::-1][:5]
    assert [round(s, 4) for _, s in hits] == [round(float(s), 4) for s in brute]


def test_recall_statement_is_one_index_only_scan_and_exact(runtime, user_id, make_user):
    """The recall round trip: half-precision ranking inside the covering index, fp32 re-rank,
    the same top-k as numpy, and never a row of another user."""
    other = make_user("other")
    vectors = _unit_vectors(seed=11, count=120)
    with runtime.engine.begin() as connection:
        for vector in vectors:
            _insert(connection, user_id, vector)
            _insert(connection, other, vector)
    # An index-only scan needs the visibility map current (autovacuum keeps it so in the lab).
    with runtime.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM ANALYZE memories"))
    now, query = runtime.clock.now(), vectors[5]
    with runtime.engine.connect() as connection:
        connection.execute(text("SET enable_seqscan = off"))
        plan = explain_recall(connection, user_id, query, now, 30, ["diet"], 10)
        rows = recall_candidates(connection, user_id, query, now, 30, ["diet"], 10)
    # Both arms (nearest, topical) read the covering index only; no arm scans the table.
    assert plan.count("Index Only Scan using memories_live_by_user_half") == 2, plan
    assert "Seq Scan" not in plan and "Bitmap Heap Scan" not in plan, plan
    mine = {str(memory_id) for (memory_id,) in _ids(runtime, user_id)}
    assert {row.id for row in rows} <= mine
    top = np.argsort(-(vectors @ query))[:30]
    assert sorted(round(row.similarity, 4) for row in rows) == sorted(round(float(vectors[i] @ query), 4) for i in top)


def _ids(runtime, user_id: str):
    with runtime.engine.connect() as connection:
        return connection.execute(text("SELECT id FROM memories WHERE user_id = :u"), {"u": user_id}).all()

"""The exact per-user recall query (the hot path), in one round trip.

Written by hand rather than through the ORM because its shape is what makes it fast and
exact: each arm repeats the partial index's predicate verbatim (else Postgres scans the
table), writes the distance once, and binds the vector as a binary parameter (pgvector's
psycopg adapter). One statement returns everything scoring needs:
- `scored`: the user's live entries in the covering index (index-only) with their
  half-precision distance, inlined into both arms (NOT MATERIALIZED: each arm's bounded
  sort reads the index directly, and the topical arm computes distances only for the
  rows on topic; materialising it measured 3.97 ms p50 against 2.64 at 5,000 memories);
- `nearest`: the user's closest live memories by cosine: the top RERANK_POOL by
  half-precision distance, re-ranked on the fp32 vectors, so the answer is exact;
- `topical`: the closest memories among those labelled with a topic the message asks
  about, which a user with thousands of memories would otherwise leave outside `nearest`
  (a restaurant question and the dairy intolerance share no word);
- `procedural`: the user's rules, injected every turn whatever their similarity.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from pgvector import HalfVector
from sqlalchemy import Connection, text

from db.schema import LIVE_MEMORY_PREDICATE

_LIVE = f"user_id = :user_id AND {LIVE_MEMORY_PREDICATE} AND (expires_at IS NULL OR expires_at > :now)"

RERANK_POOL = 50
"""How many half-precision neighbours are re-ranked on the fp32 vectors. halfvec rounding
moves a neighbour a few ranks at most, so the fp32 top-30 of the half-precision top-50
is the exact top-30 (checked against numpy by benchmarks/recall_latency.py)."""

RECALL_SQL = f"""
WITH scored AS NOT MATERIALIZED (
  SELECT id, topics && CAST(:topics AS text[]) AS on_topic, embedding_half <=> :query_half AS distance
  FROM memories
  WHERE {_LIVE}
), near_half AS (
  SELECT id FROM scored ORDER BY distance LIMIT {RERANK_POOL}
), nearest AS (
  SELECT m.id, m.embedding <=> :query AS distance FROM memories m JOIN near_half USING (id)
  WHERE m.user_id = :user_id
  ORDER BY distance LIMIT :limit
), topical AS (
  SELECT id FROM scored WHERE on_topic ORDER BY distance LIMIT :topical_limit
), procedural AS (
  SELECT id FROM memories
  WHERE user_id = :user_id AND kind = 'procedural' AND {LIVE_MEMORY_PREDICATE}
    AND (expires_at IS NULL OR expires_at > :now)
), chosen AS (
  SELECT id FROM nearest UNION SELECT id FROM topical UNION SELECT id FROM procedural
)
SELECT m.id, m.kind, m.content, m.importance, m.created_at, m.topics, 1 - (m.embedding <=> :query) AS similarity
FROM memories m JOIN chosen USING (id)
WHERE m.user_id = :user_id
"""
"""The procedural arm's literal `kind = 'procedural'` matches the partial index
`memories_live_procedural` (a bound parameter would stop a generic plan from using it)."""


NEAREST_LIVE_SQL = f"""
SELECT id, embedding <=> :query AS distance FROM memories
WHERE {_LIVE}
ORDER BY distance LIMIT :limit
"""
"""The nearest arm alone: what the extractor is shown and what `forget` matches."""


def nearest_live_memories(connection: Connection, user_id: str, query: np.ndarray, now: datetime,
                          limit: int) -> list[tuple[str, float]]:
    """(memory id, cosine similarity) of the user's nearest live, unexpired memories."""
    rows = connection.execute(text(NEAREST_LIVE_SQL), {"query": np.asarray(query, dtype=np.float32), "user_id": user_id,
                                                       "now": now, "limit": limit}).all()
    return [(str(row.id), 1.0 - float(row.distance)) for row in rows]


def explain_nearest(connection: Connection, user_id: str, query: np.ndarray, now: datetime, limit: int) -> str:
    plan = connection.execute(text("EXPLAIN " + NEAREST_LIVE_SQL), {"query": np.asarray(query, dtype=np.float32),
                                                                    "user_id": user_id, "now": now, "limit": limit})
    return "\n".join(plan.scalars())


@dataclass(frozen=True)
class RecallRow:
    id: str
    kind: str
    content: str
    importance: float
    created_at: datetime
    topics: tuple[str, ...]
    similarity: float


def _parameters(user_id: str, query: np.ndarray, now: datetime, limit: int, topics: list[str],
                topical_limit: int) -> dict:
    vector = np.asarray(query, dtype=np.float32)
    # The half-precision query is bound as its own parameter: a CAST in the SQL is evaluated
    # once per row it is compared with, not once per statement.
    return {"query": vector, "query_half": HalfVector(vector), "user_id": user_id, "now": now, "limit": limit,
            "topics": list(topics), "topical_limit": topical_limit}


def recall_candidates(connection: Connection, user_id: str, query: np.ndarray, now: datetime, limit: int,
                      topics: list[str], topical_limit: int) -> list[RecallRow]:
    """The user's nearest live memories, the nearest of the asked topics, and their rules."""
    rows = connection.execute(text(RECALL_SQL), _parameters(user_id, query, now, limit, topics, topical_limit)).all()
    return [RecallRow(str(row.id), row.kind, row.content, float(row.importance), row.created_at, tuple(row.topics or ()),
                      float(row.similarity)) for row in rows]


def explain_recall(connection: Connection, user_id: str, query: np.ndarray, now: datetime, limit: int,
                   topics: list[str] = (), topical_limit: int = 10) -> str:
    plan = connection.execute(text("EXPLAIN " + RECALL_SQL),
                              _parameters(user_id, query, now, limit, list(topics), topical_limit)).scalars()
    return "\n".join(plan)

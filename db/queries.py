"""The exact per-user nearest-memory query (the recall hot path).

Written by hand rather than through the ORM because its shape is what makes it fast:
it repeats the partial index's predicate verbatim (else Postgres scans the table), writes
the distance once, and binds the vector as a binary parameter (pgvector's psycopg
adapter), so the scan is index-only over the covering index.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
from sqlalchemy import Connection, text

from db.schema import LIVE_MEMORY_PREDICATE

NEAREST_LIVE_SQL = f"""
SELECT id, embedding <=> :query AS distance
FROM memories
WHERE user_id = :user_id AND {LIVE_MEMORY_PREDICATE}
  AND (expires_at IS NULL OR expires_at > :now)
ORDER BY distance
LIMIT :limit
"""


def nearest_live_memories(
    connection: Connection, user_id: str, query: np.ndarray, now: datetime, limit: int
) -> list[tuple[str, float]]:
    """(memory id, cosine similarity) of the user's nearest live, unexpired memories."""
    rows = connection.execute(
        text(NEAREST_LIVE_SQL), {"query": np.asarray(query, dtype=np.float32), "user_id": user_id, "now": now, "limit": limit}
    ).all()
    return [(str(row.id), 1.0 - float(row.distance)) for row in rows]


def explain_nearest(connection: Connection, user_id: str, query: np.ndarray, now: datetime, limit: int) -> str:
    plan = connection.execute(
        text("EXPLAIN " + NEAREST_LIVE_SQL),
        {"query": np.asarray(query, dtype=np.float32), "user_id": user_id, "now": now, "limit": limit},
    ).scalars()
    return "\n".join(plan)

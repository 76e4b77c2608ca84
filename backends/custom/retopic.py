"""Relabel stored memories whose retrieval topics came from another lexicon.

Topics are set when a memory is stored (backends/custom/topics.py), so a better lexicon
would otherwise reach only new memories, and a memory stored before topics existed would
stay unreachable by topic forever. Each memory keeps the fingerprint of the lexicon that
labelled it; at start the custom backend relabels every memory with another fingerprint,
from its stored text and embedding (no model call, no re-embedding).
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import Engine, text

from backends.custom.topics import TopicIndex

BATCH = 500
"""Memories relabelled per transaction: short transactions, so turns never wait long."""

_STALE = text("SELECT id, user_id, content, embedding FROM memories WHERE topics_lexicon <> :fingerprint LIMIT :limit")
_RELABEL = text("UPDATE memories SET topics = :topics, topics_lexicon = :fingerprint WHERE user_id = :user_id AND id = :id")


def relabel_stale(engine: Engine, topics: TopicIndex) -> int:
    """Relabel every memory not labelled by `topics`' lexicon; returns how many were."""
    relabelled = 0
    while True:
        with engine.begin() as connection:
            rows = connection.execute(_STALE, {"fingerprint": topics.fingerprint, "limit": BATCH}).all()
            if not rows:
                return relabelled
            connection.execute(_RELABEL, [
                {"topics": topics.memory_topics(row.content, np.asarray(row.embedding.to_numpy(), dtype=np.float32)),
                 "fingerprint": topics.fingerprint, "user_id": row.user_id, "id": row.id}
                for row in rows
            ])
            relabelled += len(rows)

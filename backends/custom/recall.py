"""Recall: which of the user's memories go in front of the model this turn, and why.

Cosine scores overlap ("hello" vs "User is vegetarian" 0.157, a dinner question 0.189), so
no single rule decides: a similarity gate first, then a score (similarity, decayed by age
for episodic memories only, plus an importance bonus), then top-k under a TOKEN budget
(a count says nothing about prompt cost). Procedural memories (how the user wants to be
answered) apply to every turn, so they bypass the gate. Every candidate comes back with
its numbers and its fate, so the lab can show why a note was or was not injected.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime

from sqlalchemy import Engine, Row, select, text, update
from sqlmodel import Session

from backends.base import Knobs, Note, Recall
from backends.note_gate import gate_ranked
from chat.injection import format_notes, note_line
from db.models import Memory
from db.queries import nearest_live_memories
from db.schema import LIVE_MEMORY_PREDICATE
from embeddings import Embedder, embed_one
from llm.tokens import approx_tokens

CANDIDATES = 30
"""How many nearest memories are scored; more than top_k so the lab can show what was cut."""


def recency(kind: str, created_at: datetime, now: datetime, half_life_days: float) -> float:
    """Exponential decay for episodic memories (events age); facts and rules do not."""
    if kind != "episodic":
        return 1.0
    age_days = max((now - created_at).total_seconds() / 86400.0, 0.0)
    return 0.5 ** (age_days / half_life_days)


COLUMNS = (Memory.id, Memory.kind, Memory.content, Memory.importance, Memory.created_at)
"""What scoring needs; not the 384-float embedding the ORM entity would also fetch."""


def _rows(session: Session, user_id: str, ids: list[str]) -> dict[str, Row]:
    rows = session.execute(select(*COLUMNS).where(Memory.user_id == user_id, Memory.id.in_([uuid.UUID(i) for i in ids])))
    return {str(row.id): row for row in rows}


PROCEDURAL_SQL = f"""
SELECT id, kind, content, importance, created_at FROM memories
WHERE user_id = :user_id AND kind = 'procedural' AND {LIVE_MEMORY_PREDICATE}
  AND (expires_at IS NULL OR expires_at > :now)
ORDER BY created_at
"""
"""Literal predicates matching the partial index `memories_live_procedural` (a bound
parameter for kind would stop a generic plan from proving the index applies)."""


def _live_procedural(session: Session, user_id: str, now: datetime) -> list[Row]:
    return list(session.execute(text(PROCEDURAL_SQL), {"user_id": user_id, "now": now}))


def _note(row: Row, similarity: float | None, now: datetime, knobs: Knobs, importance_weight: float) -> Note:
    rec = recency(row.kind, row.created_at, now, knobs.half_life_days)
    score = (similarity or 0.0) * rec + importance_weight * row.importance
    note = Note(memory_id=str(row.id), kind=row.kind, content=row.content, created_at=row.created_at,
                similarity=similarity, recency=rec, importance=row.importance, score=score)
    note.tokens = approx_tokens(note_line(note))
    return note


def select_notes(notes: list[Note], knobs: Knobs) -> list[Note]:
    """Set each note's status; returns the injected ones in injection order.

    Procedural first (always in, counted against the budget), then the rest by score: gated
    by similarity, skipped when they would overflow the budget, cut after top_k.
    """
    budget, injected = knobs.max_memory_tokens, []
    for note in [n for n in notes if n.kind == "procedural"]:
        note.status, budget = "injected", budget - note.tokens
        injected.append(note)
    ranked = sorted((n for n in notes if n.kind != "procedural"), key=lambda n: n.score or 0.0, reverse=True)
    gate_ranked(ranked, knobs, budget, injected)
    return injected


def recall(engine: Engine, embedder: Embedder, user_id: str, query: str, knobs: Knobs, now: datetime,
           importance_weight: float) -> Recall:
    """Score the user's nearest memories for this text and decide what to inject."""
    started = time.perf_counter()
    vector = embed_one(embedder, query)
    with Session(engine) as session:
        nearest = nearest_live_memories(session.connection(), user_id, vector, now, CANDIDATES)
        similarity = dict(nearest)
        rows = _rows(session, user_id, list(similarity))
        procedural = {str(row.id): row for row in _live_procedural(session, user_id, now)}
        rows.update(procedural)
        notes = [_note(row, similarity.get(memory_id), now, knobs, importance_weight) for memory_id, row in rows.items()]
        injected = select_notes(notes, knobs)
        if injected:
            # A lost last_used_at after a crash costs nothing; waiting for a WAL flush costs ~7 ms per turn.
            session.execute(text("SET LOCAL synchronous_commit = off"))
            session.execute(
                update(Memory)
                .where(Memory.user_id == user_id, Memory.id.in_([uuid.UUID(n.memory_id) for n in injected]))
                .values(last_used_at=now)
                .execution_options(synchronize_session=False)
            )
        session.commit()
    notes.sort(key=lambda n: (n.status != "injected", -(n.score or 0.0)))
    return Recall(notes=notes, system_message=format_notes(injected), recall_ms=(time.perf_counter() - started) * 1000,
                  requested=CANDIDATES, returned=len(nearest))

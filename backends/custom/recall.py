"""Recall: which of the user's memories go in front of the model this turn, and why.

One embedding of the message, one SQL round trip (db/queries.py: the nearest memories,
the nearest of the topics the message asks about, the user's rules), then scoring in
Python over at most a few dozen rows:
- relevance: a calibrated probability that the memory helps (backends/custom/relevance.py,
  from similarity, topic affinity, rank among the user's candidates, whether the message
  is about its sender, shared words), because a raw cosine gate cannot tell "hello" from a
  dinner question;
- score: relevance plus an importance bonus (the age of an episodic memory is one of
  relevance's features: an event's decay is weighed, not multiplied blindly);
- the gate (the MIN_SIMILARITY slider, read against relevance), top-k and a TOKEN budget.
Procedural memories (how the user wants to be answered) apply to every turn and bypass
the gate. Every candidate comes back with its numbers and its fate, so the lab can show
why a note was or was not injected. `last_used_at` is written after the turn's recall
returns, off the request path.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import Engine, text

from backends.base import Knobs, Note, Recall
from backends.custom.message_form import is_personal
from backends.custom.relevance import Candidate, calibration_for, content_stems, relevance
from backends.custom.topics import TopicIndex, asked_topics
from backends.note_gate import gate_ranked
from chat.injection import format_notes, note_line
from core.knobs import RECALL_CANDIDATES
from db.queries import RecallRow, recall_candidates
from embeddings import Embedder, embed_one
from llm.tokens import approx_tokens

CANDIDATES = RECALL_CANDIDATES
"""How many nearest memories are scored; more than top_k so the lab can show what was cut."""

TOPICAL_CANDIDATES = 10
"""How many memories of the asked topics join the nearest ones, whatever their similarity."""

IMPORTANCE_NEUTRAL = 0.5
"""Importance is a bonus over the default: a memory of ordinary importance gets none."""

_touch = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-last-used")


def recency(kind: str, created_at: datetime, now: datetime, half_life_days: float) -> float:
    """Exponential decay for episodic memories (events age); facts and rules do not."""
    if kind != "episodic":
        return 1.0
    age_days = max((now - created_at).total_seconds() / 86400.0, 0.0)
    return 0.5 ** (age_days / half_life_days)


@dataclass(frozen=True)
class Candidates:
    """The rows one round trip returned, described the way relevance reads them."""

    rows: list[RecallRow]
    described: list[Candidate]
    personal: bool


def candidates_for(engine: Engine, embedder: Embedder, topics: TopicIndex, user_id: str, message: str,
                   now: datetime, half_life_days: float, query_vector: np.ndarray | None = None) -> Candidates:
    """One embedding (unless the turn brings it), one query, and each row's features."""
    vector = embed_one(embedder, message) if query_vector is None else query_vector
    affinity = topics.affinity(vector)
    with engine.connect() as connection:
        rows = recall_candidates(connection, user_id, vector, now, CANDIDATES, asked_topics(affinity), TOPICAL_CANDIDATES)
    stems = content_stems(message)
    described = [Candidate(similarity=row.similarity,
                           topic_affinity=max((affinity.get(topic, 0.0) for topic in row.topics), default=0.0),
                           episodic=row.kind == "episodic", shared_words=len(stems & content_stems(row.content)),
                           topic_count=len(row.topics), recency=recency(row.kind, row.created_at, now, half_life_days))
                 for row in rows]
    return Candidates(rows, described, is_personal(message))


def _notes(found: Candidates, embedder_name: str, importance_weight: float) -> list[Note]:
    notes = []
    calibration = calibration_for(embedder_name)
    for row, described, rel in zip(found.rows, found.described, relevance(found.described, found.personal, calibration)):
        # A calibrated relevance already weighs the memory's age (a feature); the cosine fallback does not.
        rel = rel if calibration is not None else rel * described.recency
        note = Note(memory_id=row.id, kind=row.kind, content=row.content, created_at=row.created_at,
                    similarity=row.similarity, relevance=rel, recency=described.recency, importance=row.importance,
                    score=rel + importance_weight * (row.importance - IMPORTANCE_NEUTRAL))
        note.tokens = approx_tokens(note_line(note))
        notes.append(note)
    return notes


def select_notes(notes: list[Note], knobs: Knobs) -> list[Note]:
    """Set each note's status; returns the injected ones in injection order.

    Procedural first (always in, counted against the budget), then the rest by score: gated
    by relevance, skipped when they would overflow the budget, cut after top_k.
    """
    budget, injected = knobs.max_memory_tokens, []
    for note in [n for n in notes if n.kind == "procedural"]:
        note.status, budget = "injected", budget - note.tokens
        injected.append(note)
    ranked = sorted((n for n in notes if n.kind != "procedural"), key=lambda n: n.score or 0.0, reverse=True)
    gate_ranked(ranked, knobs, budget, injected)
    return injected


def _mark_used(engine: Engine, user_id: str, memory_ids: list[str], now: datetime) -> None:
    # A lost last_used_at after a crash costs nothing; waiting for a WAL flush costs ~7 ms.
    with engine.begin() as connection:
        connection.execute(text("SET LOCAL synchronous_commit = off"))
        connection.execute(text("UPDATE memories SET last_used_at = :now WHERE user_id = :user_id AND id = ANY(CAST(:ids AS uuid[]))"),
                           {"now": now, "user_id": user_id, "ids": memory_ids})


def mark_used(engine: Engine, user_id: str, memory_ids: list[str], now: datetime) -> Future:
    """Queue the `last_used_at` write on a background thread; returns its future."""
    return _touch.submit(_mark_used, engine, user_id, memory_ids, now)


def flush_last_used(timeout: float = 10.0) -> None:
    """Wait for every queued `last_used_at` write (the writer is FIFO): for tests and shutdown."""
    _touch.submit(lambda: None).result(timeout=timeout)


def recall(engine: Engine, embedder: Embedder, topics: TopicIndex, user_id: str, query: str, knobs: Knobs,
           now: datetime, importance_weight: float, query_vector: np.ndarray | None = None) -> Recall:
    """Score the user's candidate memories for this text and decide what to inject."""
    started = time.perf_counter()
    found = candidates_for(engine, embedder, topics, user_id, query, now, knobs.half_life_days, query_vector)
    notes = _notes(found, embedder.name, importance_weight)
    injected = select_notes(notes, knobs)
    if injected:
        mark_used(engine, user_id, [note.memory_id for note in injected], now)
    notes.sort(key=lambda n: (n.status != "injected", -(n.score or 0.0)))
    return Recall(notes=notes, system_message=format_notes(injected), recall_ms=(time.perf_counter() - started) * 1000,
                  requested=CANDIDATES, returned=len(found.rows))

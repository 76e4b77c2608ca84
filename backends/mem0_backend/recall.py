"""Mem0's search results as the lab's recall: every candidate with its numbers and fate.

Mem0 is asked for top_k with threshold 0, so `returned` counts what its store gave back
(the number that exposes a filtered-HNSW shortfall: "3 of 8 came back"), and the lab's
threshold and token budget are applied here, the same gates the custom pipeline uses, so
the columns compare like for like.
"""

from __future__ import annotations

import time
from typing import Any

from backends.base import Knobs, Note, Recall
from backends.mem0_backend.store import Hit, Mem0Store
from backends.note_gate import gate_ranked
from chat.injection import format_notes, note_line
from llm.tokens import approx_tokens


def to_note(hit: Hit) -> Note:
    note = Note(memory_id=hit.id, kind="semantic", content=hit.text, created_at=hit.created_at,
                similarity=hit.similarity, score=hit.score)
    note.tokens = approx_tokens(note_line(note))
    return note


def select_notes(notes: list[Note], knobs: Knobs) -> list[Note]:
    """Set each note's status in Mem0's ranking order; returns the injected ones."""
    injected: list[Note] = []
    gate_ranked(notes, knobs, knobs.max_memory_tokens, injected)
    return injected


def recall(store: Mem0Store, user_id: str, query: str, knobs: Knobs, vector: Any = None) -> Recall:
    """`vector`: the message's embedding computed once for the turn (TurnContext.query_vector)."""
    if not query.strip():  # Mem0 rejects an empty query; there is nothing to recall for it
        return Recall(skipped_reason="empty message", requested=knobs.top_k)
    started = time.perf_counter()
    hits = store.search(user_id, query, top_k=knobs.top_k, vector=vector)
    notes = [to_note(hit) for hit in hits]
    injected = select_notes(notes, knobs)
    return Recall(notes=notes, system_message=format_notes(injected), recall_ms=(time.perf_counter() - started) * 1000,
                  requested=knobs.top_k, returned=len(hits))

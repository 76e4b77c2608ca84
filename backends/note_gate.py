"""The gates every recalling backend applies to its ranked candidates, so the lab's sliders
mean the same thing in every column: similarity threshold, top-k, token budget."""

from __future__ import annotations

from core import Knobs, Note


def gate_score(note: Note) -> float:
    """What the similarity gate compares: the calibrated relevance where a backend has one."""
    value = note.relevance if note.relevance is not None else note.similarity
    return value or 0.0


def gate_ranked(ranked: list[Note], knobs: Knobs, budget: int, injected: list[Note]) -> int:
    """Set each note's status in the given order, appending the admitted ones to `injected`;
    returns the budget left. A note that would overflow the budget is skipped, not a stop:
    a shorter note further down may still fit."""
    for note in ranked:
        if gate_score(note) < knobs.min_similarity:
            note.status = "below_threshold"
        elif len(injected) >= knobs.top_k:
            note.status = "not_selected"
        elif note.tokens > budget:
            note.status = "over_budget"
        else:
            note.status, budget = "injected", budget - note.tokens
            injected.append(note)
    return budget

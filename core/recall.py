"""What recall hands the turn: every candidate with the numbers that decided its fate."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

NoteStatus = Literal["injected", "below_threshold", "over_budget", "not_selected"]


class Note(BaseModel):
    """One recall candidate, with every number that decided whether it went in.

    `similarity` is the raw cosine; `relevance`, when a backend computes one, is its
    calibrated estimate that the note helps (the custom pipeline's probability), and the
    gate reads it instead of the cosine.
    """

    memory_id: str
    kind: str = "semantic"
    content: str
    created_at: datetime | None = None
    similarity: float | None = None
    relevance: float | None = None
    recency: float | None = None
    importance: float | None = None
    score: float | None = None
    tokens: int = 0
    status: NoteStatus = "injected"


class Recall(BaseModel):
    """What a backend decided to put in front of the model this turn."""

    notes: list[Note] = Field(default_factory=list)
    system_message: str | None = None
    recall_ms: float = 0.0
    requested: int = 0
    returned: int = 0
    skipped_reason: str | None = None

    @property
    def injected(self) -> list[Note]:
        return [note for note in self.notes if note.status == "injected"]

    @property
    def cut(self) -> list[Note]:
        return [note for note in self.notes if note.status != "injected"]

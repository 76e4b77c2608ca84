"""The one interface every memory backend implements.

The lab, the evals and the benchmarks only talk to `MemoryBackend`, so a column in the UI,
an eval score and a benchmark row mean the same thing for Mem0, our pipeline, the
memory-tool agent and the no-memory baseline. A turn is three steps (prepare: recall;
run: the model call; after: background work) so each can be timed and shown separately.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from settings import Settings, get_settings

NoteStatus = Literal["injected", "below_threshold", "over_budget", "not_selected"]
MemoryStatus = Literal["live", "superseded", "retracted", "expired"]
TextCallback = Callable[[str], None]


class Knobs(BaseModel):
    """The per-turn memory settings (the lab's sliders); they act on the next turn."""

    min_similarity: float = 0.30
    half_life_days: float = 90.0
    max_memory_tokens: int = 600
    top_k: int = 8
    incognito: bool = False

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **overrides: Any) -> "Knobs":
        settings = settings or get_settings()
        values = {
            "min_similarity": settings.min_similarity,
            "half_life_days": settings.half_life_days,
            "max_memory_tokens": settings.max_memory_tokens,
            "top_k": settings.top_k,
        }
        values.update(overrides)
        return cls(**values)


class Note(BaseModel):
    """One recall candidate, with every number that decided whether it went in."""

    memory_id: str
    kind: str = "semantic"
    content: str
    created_at: datetime | None = None
    similarity: float | None = None
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


class ToolCall(BaseModel):
    name: str
    command: str | None = None
    path: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    is_error: bool = False


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields})


class Timings(BaseModel):
    recall_ms: float = 0.0
    ttft_ms: float | None = None
    total_ms: float = 0.0


class TurnResult(BaseModel):
    backend: str
    reply: str
    model_label: str
    recall: Recall = Field(default_factory=Recall)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    read_texts: list[str] = Field(default_factory=list, description="Memory text the model read via tools")
    usage: Usage = Field(default_factory=Usage)
    timings: Timings = Field(default_factory=Timings)
    cost_usd: float = 0.0
    jobs: list[int] = Field(default_factory=list)
    error: str | None = None
    conversation_id: str | None = None
    assistant_message_id: str | None = None
    user_message_id: str | None = None

    @property
    def injected_texts(self) -> list[str]:
        """Everything given to the model as memory this turn (notes and files read)."""
        return [note.content for note in self.recall.injected] + self.read_texts


class MemoryRecord(BaseModel):
    """A stored memory as the Memories page and the evals see it."""

    id: str
    content: str
    kind: str = "semantic"
    status: MemoryStatus = "live"
    created_at: datetime | None = None
    last_used_at: datetime | None = None
    expires_at: datetime | None = None
    importance: float | None = None
    lineage_id: str | None = None
    evidence: str | None = None
    source_message_id: str | None = None
    source_text: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class ErasureReport(BaseModel):
    backend: str
    user_id: str
    deleted: dict[str, int] = Field(default_factory=dict, description="store -> rows/files deleted")

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


class TurnContext(BaseModel):
    """Everything a backend needs about the turn; user_id comes from the server session only."""

    user_id: str
    text: str
    knobs: Knobs = Field(default_factory=Knobs)


class MemoryBackend(abc.ABC):
    """One column of the lab."""

    name: str
    label: str
    description: str = ""

    # -- a turn ------------------------------------------------------------------
    @abc.abstractmethod
    def prepare_turn(self, context: TurnContext) -> Recall:
        """Recall: decide what to inject, before the model call."""

    @abc.abstractmethod
    def run_turn(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None) -> TurnResult:
        """Call the model (streaming text to `on_text`) and persist the turn."""

    def after_turn(self, context: TurnContext, result: TurnResult) -> list[int]:
        """Queue background work (extraction, Mem0 add); returns the job ids."""
        return []

    def turn(self, context: TurnContext, on_text: TextCallback | None = None) -> TurnResult:
        """The whole turn as the lab and the evals run it."""
        recall = Recall(skipped_reason="incognito") if context.knobs.incognito else self.prepare_turn(context)
        result = self.run_turn(context, recall, on_text)
        if not context.knobs.incognito and result.error is None:
            result.jobs = self.after_turn(context, result)
        return result

    # -- conversations -----------------------------------------------------------
    @abc.abstractmethod
    def new_conversation(self, user_id: str) -> None:
        """End the current conversation; the next turn starts a fresh one."""

    # -- what is stored ----------------------------------------------------------
    @abc.abstractmethod
    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        """The user's memories; superseded/retracted/expired ones only when asked."""

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        """Hard-delete one memory (every version of its lineage where there are versions)."""
        return False

    def forget(self, user_id: str, topic: str) -> list[MemoryRecord]:
        """Delete what is remembered about a topic; returns what was deleted."""
        return []

    @abc.abstractmethod
    def erase_user(self, user_id: str) -> ErasureReport:
        """Delete every copy of the user's data this backend holds; says where."""

    def stored_texts(self, user_id: str) -> list[str]:
        """Live memory texts (for the memory-tool agent: non-empty lines of the user's files)."""
        return [record.content for record in self.list_memories(user_id)]

    def all_texts(self, user_id: str) -> list[str]:
        """Every text this backend keeps about the user, in any store (for erasure checks)."""
        return [record.content for record in self.list_memories(user_id, include_inactive=True)]

    def sweep(self) -> dict[str, int]:
        """Nightly forgetting work; returns counts by reason."""
        return {}

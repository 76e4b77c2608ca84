"""Stored memories and erasure reports, as the pages, the evals and the tests see them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

MemoryStatus = Literal["live", "superseded", "retracted", "expired"]


class FileLocation(BaseModel):
    """Where a memory-tool record lives: a line of a file under /memories."""

    path: str
    line: int
    updated_at: datetime | None = None


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
    location: FileLocation | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class ErasureReport(BaseModel):
    backend: str
    user_id: str
    deleted: dict[str, int] = Field(default_factory=dict, description="store -> rows/files deleted")
    notes: list[str] = Field(default_factory=list, description="What is gone at once, what copies remain and for how long")

    @property
    def total(self) -> int:
        return sum(self.deleted.values())

"""The "Noted: ..." event a backend writes when background work stored memories.

One typed shape for every backend, so the lab reads one field instead of guessing which
name each writer chose.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

NOTED_KIND = "noted"


class NotedMemory(BaseModel):
    id: str | None = None
    text: str
    change: str = "added"
    """added | updated | retracted | deleted"""


class NotedEvent(BaseModel):
    backend: str
    message_id: str | None = None
    job_id: int | None = None
    memories: list[NotedMemory] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The sentence the lab shows."""
        parts = [m.text if m.change == "added" else f"{m.change}: {m.text}" for m in self.memories]
        return "; ".join(part for part in parts if part)

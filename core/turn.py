"""A turn as every backend sees it: what comes in (TurnContext) and what goes out (TurnResult).

The context is where input is checked, once, for every backend: the user id comes from
the server session and is normalised here; the message is refused when empty or larger
than the lab accepts, and cleaned of what Postgres and the JSON encoder cannot carry (NUL
bytes, lone surrogates), so a bad message gets a clear error instead of breaking a turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, field_validator

from core.knobs import Knobs
from core.recall import Recall
from core.usage import Usage
from core.user_ids import normalise_user_id

TextCallback = Callable[[str], None]
MAX_MESSAGE_CHARS = 20_000
"""Longer pastes are refused (the lab says so); a memory system is not a document store."""
REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def clean_text(text: str) -> str:
    """NUL bytes and unpaired surrogates become U+FFFD: Postgres text cannot hold NUL, and a
    lone surrogate cannot be encoded as UTF-8, so either would fail every later write."""
    return _UNSTORABLE.sub(REPLACEMENT, text)


def message_problem(text: str) -> str | None:
    """Why a message is refused before any backend or model sees it, or None when it can be sent."""
    if not text.strip():
        return "The message is empty: type something to send."
    if len(text) > MAX_MESSAGE_CHARS:
        return f"The message is {len(text):,} characters; the lab accepts up to {MAX_MESSAGE_CHARS:,}."
    return None


class TurnContext(BaseModel):
    """Everything a backend needs about the turn; user_id comes from the server session only."""

    user_id: str
    text: str
    knobs: Knobs = Field(default_factory=Knobs)
    query_vector: Any = Field(default=None, exclude=True, repr=False)
    """The message's embedding, computed once per turn and shared by every backend."""

    @field_validator("user_id")
    @classmethod
    def _user_id(cls, value: str) -> str:
        return normalise_user_id(value)

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        value = clean_text(value)
        problem = message_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class ToolCall(BaseModel):
    name: str
    command: str | None = None
    path: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    is_error: bool = False


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
    truncated: bool = False
    """The reply stopped at max_tokens: shown as cut."""
    history_messages: int = 0
    """Messages replayed before this turn's user message (0: the conversation's first turn)."""
    prompt_tokens: int = 0
    """The longest single request of the turn, in tokens (what the cache minimum applies to)."""
    conversation_id: str | None = None
    assistant_message_id: str | None = None
    user_message_id: str | None = None

    @property
    def injected_texts(self) -> list[str]:
        """Everything given to the model as memory this turn (notes and files read)."""
        return [note.content for note in self.recall.injected] + self.read_texts

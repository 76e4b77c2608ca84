"""The interface every LLM provider implements, and the readable errors they raise.

Messages are Anthropic-shaped everywhere in the lab (user / assistant / mid-conversation
system messages with `clear_at`); other providers translate at their edge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from core import Exchange, Usage

T = TypeVar("T", bound=BaseModel)
MessageParam = dict[str, Any]


class LLMError(Exception):
    """A model failure phrased for a person: what happened and what to do."""


class LLMOutputError(LLMError):
    """The model answered, but its output cannot be used: structured output cut at max_tokens
    or not valid JSON for the schema.

    Why an error and not None: "nothing to store" and "the answer was broken" must never look
    the same to a caller, or a background job ends `done` with the user's facts dropped. As an
    error it fails the attempt, so the queue retries it and finally dead-letters it.
    """


class ChatResponse(BaseModel):
    text: str
    content: list[dict[str, Any]] = Field(default_factory=list, description="Assistant content blocks")
    usage: Usage = Field(default_factory=Usage)
    stop_reason: str | None = None
    model: str = ""
    ttft_ms: float | None = None
    total_ms: float = 0.0


class ChatModel(Protocol):
    provider: str
    model: str
    label: str
    billed: bool
    """False for the offline model: its turns cost nothing, whatever model name it echoes."""
    supports_tool_runner: bool
    """True when `run_tool_runner` drives SDK tool objects (Anthropic and the offline model)."""

    def chat(
        self,
        system: str,
        messages: list[MessageParam],
        tools: list[dict[str, Any]] | None = None,
        on_text: Callable[[str], None] | None = None,
        max_tokens: int = 1024,
    ) -> ChatResponse:
        """One streamed model call with a byte-stable system prompt and prompt caching."""
        ...

    def parse(self, system: str, messages: list[MessageParam], output_model: type[T], max_tokens: int = 2048) -> T | None:
        """Structured output into a pydantic model; None only when the model refused (a decision).

        Raises LLMOutputError when the output was cut at max_tokens or is not valid for the
        schema (retryable), LLMError for transport and API failures."""
        ...

    def run_tool_runner(self, system: str, messages: list[MessageParam], tools: list[Any], max_iterations: int,
                        on_text: Callable[[str], None] | None = None, max_tokens: int = 1024) -> Exchange:
        """The provider SDK's own tool loop over SDK tool objects (only when supports_tool_runner)."""
        ...

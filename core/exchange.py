"""What one exchange with the model produced: the step between "request built" and
"turn persisted", whatever drives it (one call, a tool loop, the SDK's tool_runner)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.turn import ToolCall
from core.usage import Usage


@dataclass
class Exchange:
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Every message after the user turn, in order (assistant tool_use, user tool_result, answer)."""
    texts: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    ttft_ms: float | None = None
    model_calls: int = 0
    largest_prompt_tokens: int = 0
    """The longest single request (a tool loop sends several): what the cache minimum applies to."""
    stop_reason: str | None = None
    hit_cap: bool = False
    """The step limit was reached before a final answer."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    read_texts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(part for part in self.texts if part)

    def add_usage(self, usage: Usage, ttft_ms: float | None) -> None:
        self.model_calls += 1
        self.largest_prompt_tokens = max(self.largest_prompt_tokens, usage.prompt_tokens)
        self.usage = self.usage + usage
        self.ttft_ms = self.ttft_ms if self.ttft_ms is not None else ttft_ms

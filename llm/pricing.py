"""Estimated cost per turn from a price table (USD per million tokens).

Estimates only: the lab shows them to compare backends, not to bill anyone. Cache writes
cost 1.25x input and cache reads 0.1x input, as Anthropic prices 5-minute caching.
"""

from __future__ import annotations

from core import Usage
from llm.chat_model import ChatModel

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    # model prefix: (input, output)
    "claude-opus": (15.0, 75.0),
    "claude-sonnet": (3.0, 15.0),
    "claude-haiku": (1.0, 5.0),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.5, 10.0),
}
CACHE_WRITE_MULTIPLIER = 1.25
CACHE_READ_MULTIPLIER = 0.10


def price_for(model: str) -> tuple[float, float]:
    for prefix, price in PRICES_PER_MTOK.items():
        if model.startswith(prefix):
            return price
    return (0.0, 0.0)  # local or unknown models: shown as free rather than guessed


def estimate_cost(model: ChatModel, usage: Usage) -> float:
    if not model.billed:
        return 0.0
    input_price, output_price = price_for(model.model)
    input_cost = (
        usage.input_tokens
        + usage.cache_write_tokens * CACHE_WRITE_MULTIPLIER
        + usage.cache_read_tokens * CACHE_READ_MULTIPLIER
    ) * input_price
    return (input_cost + usage.output_tokens * output_price) / 1_000_000

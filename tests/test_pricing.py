"""Estimated cost: real models priced from the table, the offline model free."""

from __future__ import annotations

import pytest

from backends.base import Usage
from llm.anthropic_chat import AnthropicChat
from llm.pricing import estimate_cost
from settings import load_settings


def test_cache_reads_are_cheaper_than_writes_and_offline_is_free():
    settings = load_settings(llm_provider="offline")
    claude = AnthropicChat(settings, base_url="http://127.0.0.1:9", model="claude-sonnet-5-5")
    offline = AnthropicChat(settings, base_url="http://127.0.0.1:9", model="claude-sonnet-5-5", billed=False)
    usage = Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=10_000, cache_write_tokens=0)
    # 1000*3 + 10000*3*0.1 = 6000 input-dollar-units, 100*15 = 1500 output, per million tokens.
    assert estimate_cost(claude, usage) == pytest.approx(7500 / 1_000_000)
    written = usage.model_copy(update={"cache_read_tokens": 0, "cache_write_tokens": 10_000})
    assert estimate_cost(claude, written) > estimate_cost(claude, usage)
    assert estimate_cost(offline, usage) == 0.0

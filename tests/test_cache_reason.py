"""Why a turn read 0 tokens from the prompt cache: each case of the pure explanation, and
the minimum cacheable length per model family."""

from __future__ import annotations

import pytest

from llm.caching import cache_miss_reason, min_cacheable_tokens
from settings import load_settings


def test_a_read_needs_no_explanation():
    assert cache_miss_reason(cache_read=900, cache_write=40, prompt_tokens=1500, minimum=1024, first_turn=False) is None


def test_first_short_turn_says_both_facts_with_the_numbers():
    reason = cache_miss_reason(0, 0, prompt_tokens=312, minimum=1024, first_turn=True)
    assert reason.startswith("first turn of the conversation, nothing cached yet")
    assert "312 tokens" in reason and "(1,024)" in reason and "nothing was written" in reason


def test_first_long_turn_says_what_it_wrote():
    reason = cache_miss_reason(0, 1800, prompt_tokens=1800, minimum=1024, first_turn=True)
    assert reason == "first turn of the conversation, nothing cached yet (this turn wrote 1,800 tokens for the next)."


def test_later_short_turn_quotes_length_and_minimum():
    reason = cache_miss_reason(0, 0, prompt_tokens=2000, minimum=4096, first_turn=False, previous_prompt_tokens=1500)
    assert "the prompt (2,000 tokens) is under the model's minimum cacheable length (4,096)" in reason
    assert "first turn" not in reason


def test_first_turn_past_the_minimum_after_short_ones():
    reason = cache_miss_reason(0, 1100, prompt_tokens=1100, minimum=1024, first_turn=False, previous_prompt_tokens=990)
    assert "previous prompt (990 tokens) was under the minimum (1,024)" in reason and "wrote 1,100" in reason


@pytest.mark.parametrize("previous", [1500, None])
def test_a_long_prompt_that_read_nothing_had_its_prefix_changed(previous):
    reason = cache_miss_reason(0, 1600, prompt_tokens=1600, minimum=1024, first_turn=False, previous_prompt_tokens=previous)
    assert reason.startswith("the prompt's prefix changed") and "expired (5 minutes" in reason


@pytest.mark.parametrize(("model", "minimum"), [
    ("claude-sonnet-4-5-20250929", 1024), ("claude-opus-4-5", 4096), ("claude-haiku-4-5", 4096),
    ("claude-3-5-haiku-latest", 2048), ("claude-sonnet-4-6", 2048), ("claude-sonnet-5-5", 1024),
])
def test_anthropic_minimum_by_model_family(model, minimum):
    settings = load_settings(llm_provider="anthropic", anthropic_api_key="sk-test-not-real")
    assert min_cacheable_tokens(settings, model) == minimum


def test_the_offline_model_minimum_is_its_setting():
    assert min_cacheable_tokens(load_settings(llm_provider="offline", offline_min_cache_tokens=300)) == 300

"""Why a turn read nothing from the prompt cache, in words a person can check.

A short demo chat shows "cache-read tokens 0" on every turn, which looks like the caching
design is broken when it is working as the API documents: the first request of a
conversation has nothing cached before it, and a prompt under the model's minimum
cacheable length is neither written nor read. Saying which of these it is (with the
numbers) is what makes the cache column believable; `cache_miss_reason` is pure so each
case is unit-tested.
"""

from __future__ import annotations

from settings import Settings

ANTHROPIC_MIN_CACHEABLE: tuple[tuple[str, int], ...] = (
    # model-name prefix -> minimum cacheable prompt (tokens), from Anthropic's prompt-caching
    # documentation; the first matching prefix wins, so specific versions come first.
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-sonnet-4-6", 2048),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
    ("claude-haiku-3", 2048),
)
DEFAULT_MIN_CACHEABLE = 1024
"""Sonnet and Opus families (and OpenAI's automatic caching) start at 1,024 tokens; an
unknown model is assumed to as well."""
CACHE_LIFETIME_MINUTES = 5


def min_cacheable_tokens(settings: Settings, model: str | None = None) -> int:
    """The shortest prompt the configured chat model caches."""
    if settings.is_offline:
        return settings.offline_min_cache_tokens
    model = model or settings.chat_model
    if settings.resolved_provider == "anthropic":
        return next((tokens for prefix, tokens in ANTHROPIC_MIN_CACHEABLE if model.startswith(prefix)),
                    DEFAULT_MIN_CACHEABLE)
    return DEFAULT_MIN_CACHEABLE


def cache_miss_reason(cache_read: int, cache_write: int, prompt_tokens: int, minimum: int,
                      first_turn: bool, previous_prompt_tokens: int | None = None) -> str | None:
    """Why `cache_read` is 0, or None when something was read.

    `prompt_tokens` is the longest single request of the turn (input + cache read + cache
    write: a tool loop sends several); `previous_prompt_tokens` the same for the previous
    turn of the conversation, when known.
    """
    if cache_read > 0:
        return None
    short = prompt_tokens < minimum
    length = f"the prompt ({prompt_tokens:,} tokens) is under the model's minimum cacheable length ({minimum:,})"
    if first_turn and short:
        return f"first turn of the conversation, nothing cached yet; and {length}, so nothing was written either."
    if first_turn:
        return f"first turn of the conversation, nothing cached yet (this turn wrote {cache_write:,} tokens for the next)."
    if short:
        return f"{length}: it is neither written nor read until the conversation grows past it."
    if previous_prompt_tokens is not None and previous_prompt_tokens < minimum:
        return (f"the previous prompt ({previous_prompt_tokens:,} tokens) was under the minimum ({minimum:,}), so "
                f"nothing was cached to read; this one wrote {cache_write:,} tokens for the next turn.")
    return ("the prompt's prefix changed since the last cached request (older turns folded into the summary, "
            f"or a different history) or the cache expired ({CACHE_LIFETIME_MINUTES} minutes unused).")

"""Which model answers: Anthropic, an OpenAI-compatible endpoint, or the offline model."""

from __future__ import annotations

from typing import Literal

from llm.anthropic_chat import AnthropicChat
from llm.chat_model import ChatModel
from llm.openai_chat import OpenAIChat
from offline_model.server import ensure_running
from settings import Settings

OFFLINE_LABEL = "offline model (rule-based)"
Purpose = Literal["chat", "extraction"]


def offline_base_url(settings: Settings) -> str:
    """Start (once per process) the loopback emulator of the Messages API and return its URL.

    It caches from OFFLINE_MIN_CACHE_TOKENS on, which the cache column's explanation quotes.
    """
    return ensure_running(settings.offline_min_cache_tokens).base_url


def anthropic_base_url(settings: Settings) -> str | None:
    return offline_base_url(settings) if settings.is_offline else settings.anthropic_base_url


def build_chat_model(settings: Settings, purpose: Purpose = "chat") -> ChatModel:
    model = settings.chat_model if purpose == "chat" else settings.extraction_model
    provider = settings.resolved_provider
    if provider == "openai":
        return OpenAIChat(settings, model=model)
    if provider == "offline":
        return AnthropicChat(settings, base_url=offline_base_url(settings), model=model, label=OFFLINE_LABEL, billed=False)
    return AnthropicChat(settings, base_url=settings.anthropic_base_url, model=model)

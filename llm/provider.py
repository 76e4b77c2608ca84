"""Which model answers: Anthropic, an OpenAI-compatible endpoint, or the offline model."""

from __future__ import annotations

import functools
from typing import Literal

from llm.anthropic_chat import AnthropicChat
from llm.chat_model import ChatModel
from llm.openai_chat import OpenAIChat
from settings import Settings, get_settings

OFFLINE_LABEL = "offline model (rule-based)"
Purpose = Literal["chat", "extraction"]


def offline_base_url() -> str:
    """Start (once per process) the loopback emulator of the Messages API and return its URL."""
    from offline_model.server import ensure_running

    return ensure_running().base_url


def anthropic_base_url(settings: Settings) -> str | None:
    return offline_base_url() if settings.is_offline else settings.anthropic_base_url


def build_chat_model(settings: Settings, purpose: Purpose = "chat") -> ChatModel:
    model = settings.chat_model if purpose == "chat" else settings.extraction_model
    provider = settings.resolved_provider
    if provider == "openai":
        return OpenAIChat(settings, model=model)
    if provider == "offline":
        return AnthropicChat(settings, base_url=offline_base_url(), model=model, label=OFFLINE_LABEL, billed=False)
    return AnthropicChat(settings, base_url=settings.anthropic_base_url, model=model)


@functools.lru_cache(maxsize=4)
def _cached(purpose: Purpose) -> ChatModel:
    return build_chat_model(get_settings(), purpose)


def get_chat_model(purpose: Purpose = "chat") -> ChatModel:
    """The process-wide model for a purpose (clients keep their connection pools)."""
    return _cached(purpose)

"""Mem0's model calls, held to the lab's rules: the lab's timeout, and no silent loss.

Why a wrapper: Mem0's add turns a broken extraction answer (cut at max_tokens, or not JSON)
into "no facts" and returns [] (see `Memory._add_to_vector_store`), and its SDK clients are
built without a timeout (the SDK default is ten minutes), so LLM_TIMEOUT_SECONDS had no
effect. Mem0 takes its LLM from a factory, with no hook for either, so after it is built
we (a) give its SDK client the lab's timeout and retries through the SDK's own
`with_options`, (b) refuse a reply cut at max_tokens, and (c) refuse a JSON-mode reply that
Mem0's own parser could not read. Refusing means raising: Mem0 re-raises model errors from
add, the `mem0.add` job's transaction (and its guard row) rolls back, and the queue retries
it, then dead-letters it. A genuine "nothing to store" (`{"memory": []}`) passes.
Mem0's code is not edited: only the objects it built are wrapped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from llm.chat_model import LLMOutputError
from settings import Settings

class _StopReasonCheck:
    """`client.messages` with `create` refusing a reply that stopped at max_tokens."""

    def __init__(self, messages: Any) -> None:
        self._messages = messages

    def create(self, **params: Any) -> Any:
        response = self._messages.create(**params)
        if getattr(response, "stop_reason", None) == "max_tokens":
            raise LLMOutputError("Mem0's extraction answer was cut at its output limit (max_tokens).")
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._messages, name)


class _CheckedAnthropicClient:
    """An Anthropic SDK client whose `messages.create` checks the stop reason."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.messages = _StopReasonCheck(client.messages)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _wants_json(response_format: Any) -> bool:
    return isinstance(response_format, dict) and response_format.get("type") in ("json_object", "json_schema")


class CheckedLLM:
    """Mem0's LLM object, with JSON-mode answers checked the way Mem0 itself parses them."""

    def __init__(self, inner: Any, parse: Callable[[str], Any]) -> None:
        self._inner = inner
        self._parse = parse

    def generate_response(self, messages: list[dict[str, Any]], response_format: Any = None, **kwargs: Any) -> Any:
        reply = self._inner.generate_response(messages=messages, response_format=response_format, **kwargs)
        if _wants_json(response_format) and isinstance(reply, str):
            try:
                parsed = self._parse(reply)
            except (ValueError, TypeError):
                parsed = None
            if not isinstance(parsed, dict):
                raise LLMOutputError("Mem0's extraction answer was not valid JSON.")
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def mem0_json_parser(remove_code_blocks: Callable[[str], str], extract_json: Callable[[str], str]) -> Callable[[str], Any]:
    """What Mem0's add accepts, built from Mem0's own helpers (so we refuse exactly what it
    would have dropped): the text without code fences as JSON, else the {...} inside it."""

    def parse(reply: str) -> Any:
        text = remove_code_blocks(reply)
        if not text or not text.strip():
            raise ValueError("empty answer")
        try:
            return json.loads(text, strict=False)
        except json.JSONDecodeError:
            return json.loads(extract_json(text), strict=False)

    return parse


def guard_llm(llm: Any, settings: Settings, parse: Callable[[str], Any]) -> CheckedLLM:
    """Apply the lab's timeout and retries to Mem0's SDK client and wrap the LLM (see module doc)."""
    client = getattr(llm, "client", None)
    if client is not None and hasattr(client, "with_options"):
        client = client.with_options(timeout=settings.llm_timeout_seconds, max_retries=settings.llm_max_retries)
        llm.client = _CheckedAnthropicClient(client) if _is_anthropic(client) else client
    return CheckedLLM(llm, parse)


def _is_anthropic(client: Any) -> bool:
    return type(client).__module__.split(".")[0] == "anthropic"

"""Any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp server).

The lab's messages are Anthropic-shaped; this module translates them at the edge:
mid-conversation system messages become `system` messages (dropped once cleared), tool
use becomes `tool_calls`, and structured output uses `response_format: json_schema`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import openai

from core import Exchange, Usage
from llm.chat_model import ChatResponse, LLMError, LLMOutputError, MessageParam, T
from settings import Settings


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


def _visible(messages: list[MessageParam]) -> list[MessageParam]:
    """Drop system messages whose `clear_at` has passed (a later user message exists)."""
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    return [
        m for i, m in enumerate(messages)
        if not (m["role"] == "system" and m.get("clear_at") == "next_user_message" and i < last_user)
    ]


def to_openai_messages(system: str, messages: list[MessageParam]) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in _visible(messages):
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if message["role"] == "assistant":
            calls = [
                {"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                for b in blocks if b.get("type") == "tool_use"
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks) or None}
            if calls:
                entry["tool_calls"] = calls
            converted.append(entry)
            continue
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for result in results:
            converted.append({"role": "tool", "tool_call_id": result["tool_use_id"], "content": _text_of(result.get("content", ""))})
        text = _text_of([b for b in blocks if b.get("type") == "text"])
        if text:
            converted.append({"role": message["role"], "content": text})
    return converted


def to_openai_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    if not tools:
        return None
    return [
        {"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                          "parameters": t.get("input_schema", {"type": "object"})}}
        for t in tools
    ]


class OpenAIChat:
    supports_tool_runner = False
    """No SDK tool objects here: tool loops run over `chat` (see chat.exchange.ToolLoop)."""
    provider = "openai"
    billed = True

    def __init__(self, settings: Settings, model: str | None = None) -> None:
        self.model = model or settings.chat_model
        self.label = f"{self.model} (OpenAI-compatible)"
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused"
        self.client = openai.OpenAI(api_key=key, base_url=settings.openai_base_url, timeout=settings.llm_timeout_seconds,
                                    max_retries=settings.llm_max_retries)

    def chat(
        self,
        system: str,
        messages: list[MessageParam],
        tools: list[dict[str, Any]] | None = None,
        on_text: Callable[[str], None] | None = None,
        max_tokens: int = 1024,
    ) -> ChatResponse:
        started = time.perf_counter()
        first_token: float | None = None
        text_parts: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage = Usage()
        stop_reason = None
        try:
            stream = self.client.chat.completions.create(
                model=self.model, messages=to_openai_messages(system, messages), tools=to_openai_tools(tools),
                max_tokens=max_tokens, stream=True, stream_options={"include_usage": True},
            )
            for chunk in stream:
                if chunk.usage is not None:
                    cached = getattr(chunk.usage.prompt_tokens_details, "cached_tokens", 0) or 0
                    usage = Usage(input_tokens=chunk.usage.prompt_tokens - cached,
                                  output_tokens=chunk.usage.completion_tokens, cache_read_tokens=cached)
                for choice in chunk.choices:
                    stop_reason = choice.finish_reason or stop_reason
                    delta = choice.delta
                    if delta.content:
                        first_token = first_token or time.perf_counter()
                        text_parts.append(delta.content)
                        if on_text is not None:
                            on_text(delta.content)
                    for call in delta.tool_calls or []:
                        slot = calls.setdefault(call.index, {"id": call.id, "name": "", "arguments": ""})
                        if call.function is not None:
                            slot["name"] += call.function.name or ""
                            slot["arguments"] += call.function.arguments or ""
        except openai.OpenAIError as error:
            raise LLMError(f"The OpenAI-compatible endpoint failed: {type(error).__name__}: {error}") from None
        text = "".join(text_parts)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for slot in calls.values():
            content.append({"type": "tool_use", "id": slot["id"], "name": slot["name"],
                            "input": json.loads(slot["arguments"] or "{}")})
        return ChatResponse(
            text=text, content=content, usage=usage, model=self.model,
            stop_reason="tool_use" if calls else ("max_tokens" if stop_reason == "length" else "end_turn"),
            ttft_ms=None if first_token is None else (first_token - started) * 1000,
            total_ms=(time.perf_counter() - started) * 1000,
        )

    def parse(self, system: str, messages: list[MessageParam], output_model: type[T], max_tokens: int = 2048) -> T | None:
        try:
            response = self.client.chat.completions.parse(
                model=self.model, messages=to_openai_messages(system, messages),
                response_format=output_model, max_tokens=max_tokens,
            )
        except openai.LengthFinishReasonError:
            raise LLMOutputError("The model's structured answer was cut at its output limit: try again.") from None
        except ValueError:  # pydantic could not validate the JSON into the model
            raise LLMOutputError("The model's structured answer was not valid JSON for the schema: try again.") from None
        except openai.OpenAIError as error:
            raise LLMError(f"The OpenAI-compatible endpoint failed: {type(error).__name__}: {error}") from None
        message = response.choices[0].message
        return None if message.refusal else message.parsed

    def run_tool_runner(self, system: str, messages: list[MessageParam], tools: list[Any], max_iterations: int,
                        on_text: Callable[[str], None] | None = None, max_tokens: int = 1024) -> Exchange:
        raise NotImplementedError("OpenAI-compatible providers have no SDK tool runner: use chat.exchange.ToolLoop")

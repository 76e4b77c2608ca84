"""Anthropic Messages API through the official SDK (also how the offline model is reached).

Every request uses the same byte-identical system prompt with top-level `cache_control`,
and memory arrives as mid-conversation `role: "system"` messages (beta header below), so
the cached prefix keeps growing turn after turn instead of being invalidated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2

from core import Exchange, TextCallback, Usage
from llm.chat_model import ChatResponse, LLMError, LLMOutputError, MessageParam, T
from llm.step_stream import StepStream
from settings import Settings

SYSTEM_MESSAGE_BETA = "mid-conversation-system-clear-at-2026-08-21"
CACHE_CONTROL = {"type": "ephemeral"}
MEMORY_TOOL_BETA = "context-management-2025-06-27"
"""The real API enables the memory tool type with this beta header."""


def readable_error(error: Exception) -> LLMError:
    """Map SDK exceptions to one sentence a person can act on (never a traceback)."""
    if isinstance(error, anthropic.AuthenticationError):
        return LLMError("The Anthropic API key was refused (401): check ANTHROPIC_API_KEY.")
    if isinstance(error, anthropic.RateLimitError):
        return LLMError("The model is rate-limited (429): wait a little and send the message again.")
    if isinstance(error, anthropic.APITimeoutError):
        return LLMError("The model did not answer in time: try again, or raise LLM_TIMEOUT_SECONDS.")
    if isinstance(error, anthropic.APIConnectionError):
        return LLMError("Cannot reach the model endpoint: check the network or ANTHROPIC_BASE_URL.")
    if isinstance(error, anthropic.APIStatusError):
        if error.status_code == 529:
            return LLMError("The model is overloaded (529): try again in a moment.")
        message = getattr(error, "message", str(error))
        return LLMError(f"The model rejected the request ({error.status_code}): {message}")
    return LLMError(f"The model call failed: {type(error).__name__}: {error}")


def usage_from(raw: Any) -> Usage:
    return Usage(
        input_tokens=getattr(raw, "input_tokens", 0) or 0,
        output_tokens=getattr(raw, "output_tokens", 0) or 0,
        cache_read_tokens=getattr(raw, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(raw, "cache_creation_input_tokens", 0) or 0,
    )


def make_client(settings: Settings, base_url: str | None) -> anthropic.Anthropic:
    key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else "offline"
    return anthropic.Anthropic(
        api_key=key,
        base_url=base_url,
        timeout=httpx2.Timeout(settings.llm_timeout_seconds, connect=5.0),
        max_retries=settings.llm_max_retries,
    )


def block_param(block: Any) -> dict[str, Any]:
    """A response block as the SDK sends it back (its `openapi_model_dump` rules, hand-copied
    because that helper is private): persisted so turn N+1 replays the bytes turn N sent."""
    return block.model_dump(mode="json", exclude_unset=True, by_alias=True,
                            exclude=getattr(block, "__api_exclude__", None))


def replayable(content: list[dict[str, Any]], stop_reason: str | None) -> list[dict[str, Any]]:
    """The blocks to persist. A tool call in a reply that did not stop for tool use (cut at
    max_tokens) is never run; replayed unanswered, it would make every later request of the
    conversation invalid, so it is dropped."""
    if stop_reason == "tool_use":
        return content
    return [block for block in content if block.get("type") != "tool_use"]


class AnthropicChat:
    provider = "anthropic"
    supports_tool_runner = True

    def __init__(self, settings: Settings, base_url: str | None = None, model: str | None = None,
                 label: str | None = None, client: anthropic.Anthropic | None = None, billed: bool = True) -> None:
        self.settings = settings
        self.model = model or settings.chat_model
        self.label = label or self.model
        self.billed = billed
        self.client = client or make_client(settings, base_url)

    def system_blocks(self, system: str) -> list[dict[str, Any]]:
        return [{"type": "text", "text": system}]

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
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": self.system_blocks(system),
            "messages": messages,
            "cache_control": CACHE_CONTROL,
            "betas": [SYSTEM_MESSAGE_BETA],
        }
        if tools:
            request["tools"] = tools
        try:
            with self.client.beta.messages.stream(**request) as stream:
                for chunk in stream.text_stream:
                    if first_token is None:
                        first_token = time.perf_counter()
                    if on_text is not None:
                        on_text(chunk)
                final = stream.get_final_message()
        except anthropic.APIError as error:
            raise readable_error(error) from None
        content = [block.model_dump(mode="json", exclude_none=True) for block in final.content]
        text = "".join(block.text for block in final.content if block.type == "text")
        return ChatResponse(
            text=text,
            content=content,
            usage=usage_from(final.usage),
            stop_reason=final.stop_reason,
            model=final.model,
            ttft_ms=None if first_token is None else (first_token - started) * 1000,
            total_ms=(time.perf_counter() - started) * 1000,
        )

    def parse(self, system: str, messages: list[MessageParam], output_model: type[T], max_tokens: int = 2048) -> T | None:
        try:
            response = self.client.messages.parse(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=messages,  # type: ignore[arg-type]
                output_format=output_model,
            )
        except anthropic.APIError as error:
            raise readable_error(error) from None
        except ValueError:  # the SDK could not validate the JSON into the model
            raise LLMOutputError("The model's structured answer was not valid JSON for the schema: try again.") from None
        if response.stop_reason == "max_tokens":
            raise LLMOutputError("The model's structured answer was cut at its output limit (max_tokens): try again.")
        if response.stop_reason == "refusal":
            return None
        return response.parsed_output

    def run_tool_runner(self, system: str, messages: list[MessageParam], tools: list[Any], max_iterations: int,
                        on_text: TextCallback | None = None, max_tokens: int = 1024) -> Exchange:
        """The SDK's `tool_runner` as one exchange: it runs the tools (SDK tool objects such as
        `BetaAbstractMemoryTool`) between streamed steps; every message is kept in order."""
        try:
            return self._tool_runner_exchange(system, messages, tools, max_iterations, on_text, max_tokens)
        except anthropic.APIError as error:
            raise readable_error(error) from None

    def _tool_runner_exchange(self, system: str, messages: list[MessageParam], tools: list[Any], max_iterations: int,
                              on_text: TextCallback | None, max_tokens: int) -> Exchange:
        exchange, started, forward = Exchange(), time.perf_counter(), StepStream(on_text)
        runner = self.client.beta.messages.tool_runner(
            model=self.model, max_tokens=max_tokens, system=self.system_blocks(system), messages=messages,
            tools=tools, max_iterations=max_iterations, stream=True,
            thread=False,  # send the whole (persisted) history every step: append-only, so the prompt cache hits
            cache_control=CACHE_CONTROL, betas=[MEMORY_TOOL_BETA, SYSTEM_MESSAGE_BETA],
        )
        for stream in runner:
            forward.new_step()
            first: float | None = None
            for chunk in stream.text_stream:
                first = first if first is not None else time.perf_counter()
                forward(chunk)
            message = stream.get_final_message()
            exchange.add_usage(usage_from(message.usage), None if first is None else (first - started) * 1000)
            exchange.stop_reason = message.stop_reason
            exchange.texts.append("".join(block.text for block in message.content if block.type == "text"))
            content = replayable([block_param(block) for block in message.content], message.stop_reason)
            exchange.messages.append({"role": "assistant", "content": content})
            if message.stop_reason == "tool_use":
                # Cached by the runner: the tools run once, and we keep the exact tool_result message it sends.
                response = runner.generate_tool_call_response()
                if response is not None:
                    exchange.messages.append(dict(response))
        exchange.hit_cap = bool(exchange.messages) and exchange.messages[-1]["role"] == "user"
        return exchange

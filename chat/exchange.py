"""The exchange step of a turn: from the request's messages to every message the model
and its tools produced. One turn pipeline (`chat.turn.ChatTurnRunner`) runs any of them:

- `ToolLoop`: `ChatModel.chat` in a loop, running plain-function tools between rounds (the
  lab's `forget` tool; the memory tool offered as a function to OpenAI-compatible models);
  with no tools it is a single call.
- `ToolRunnerStep`: the provider SDK's own `tool_runner` over SDK tool objects (the
  memory tool as Anthropic's `BetaAbstractMemoryTool`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from anthropic.lib.tools import ToolError

from core import Exchange, TextCallback, ToolCall
from llm.chat_model import ChatModel, LLMError
from llm.step_stream import StepStream

ToolHandler = Callable[[dict[str, Any]], str]
MAX_TOKENS = 1024


class ExchangeStep(Protocol):
    def __call__(self, model: ChatModel, system: str, messages: list[dict[str, Any]],
                 on_text: TextCallback | None) -> Exchange: ...


@dataclass
class ToolLoop:
    """Call, run the requested tools, call again, until the model answers or `max_rounds`.

    At the limit: `cap_is_error` raises (nothing is persisted, the user resends); otherwise
    the exchange is returned with `hit_cap` so the runner persists it with a stop note.
    """

    tools: list[dict[str, Any]] = field(default_factory=list)
    handlers: dict[str, ToolHandler] = field(default_factory=dict)
    max_rounds: int = 4
    cap_is_error: bool = True

    def __call__(self, model: ChatModel, system: str, messages: list[dict[str, Any]],
                 on_text: TextCallback | None) -> Exchange:
        exchange, forward = Exchange(), StepStream(on_text)
        for _ in range(self.max_rounds + 1):
            forward.new_step()
            response = model.chat(system, messages + exchange.messages, tools=self.tools or None, on_text=forward,
                                  max_tokens=MAX_TOKENS)
            exchange.add_usage(response.usage, response.ttft_ms)
            exchange.stop_reason = response.stop_reason
            exchange.texts.append(response.text)
            exchange.messages.append({"role": "assistant", "content": response.content or [{"type": "text", "text": ""}]})
            calls = [block for block in response.content if block.get("type") == "tool_use"]
            if response.stop_reason != "tool_use" or not calls:
                return exchange
            exchange.messages.append({"role": "user", "content": [self._run(call, exchange) for call in calls]})
        if self.cap_is_error:
            raise LLMError(f"The model kept calling tools after {self.max_rounds} rounds; the turn was stopped.")
        exchange.hit_cap = True
        return exchange

    def _run(self, call: dict[str, Any], exchange: Exchange) -> dict[str, Any]:
        handler = self.handlers.get(call["name"])
        try:
            if handler is None:
                raise ToolError(f"Unknown tool {call['name']!r}: the tools are {', '.join(self.handlers) or 'none'}.")
            output, is_error = handler(call.get("input", {})), False
        except ToolError as error:  # the tool's own refusal, worded for the model
            output, is_error = str(error), True
        except Exception as error:  # noqa: BLE001 - a tool error goes back to the model, not up the stack
            output, is_error = f"Error: {error}", True
        exchange.tool_calls.append(ToolCall(name=call["name"], input=call.get("input", {}), result=output[:2000],
                                            is_error=is_error))
        return {"type": "tool_result", "tool_use_id": call["id"], "content": output, "is_error": is_error}


@dataclass
class ToolRunnerStep:
    """The SDK's `tool_runner` (through `ChatModel.run_tool_runner`); the tools execute themselves."""

    tools: list[Any]
    max_iterations: int

    def __call__(self, model: ChatModel, system: str, messages: list[dict[str, Any]],
                 on_text: TextCallback | None) -> Exchange:
        return model.run_tool_runner(system, messages, self.tools, self.max_iterations, on_text, MAX_TOKENS)

"""The agent loop of one turn: the model calls the memory tool until it answers.

Two drivers with one result shape. Anthropic (and the offline model) go through the SDK's
`client.beta.messages.tool_runner`, which runs `PostgresMemoryTool` itself; an
OpenAI-compatible provider has no memory tool type, so the loop is run here over
`ChatModel.chat` with the same commands offered as one function tool. Both return every
message of the exchange in order (assistant tool_use, user tool_result, final answer), so
the backend can persist it and the next turn replays exactly what the model saw.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import anthropic
from anthropic.lib.tools import ToolError

from backends.base import TextCallback, Usage
from backends.memory_tool.function_tool import MEMORY_FUNCTION_TOOL
from backends.memory_tool.tool import TOOL_NAME, PostgresMemoryTool
from llm.anthropic_chat import CACHE_CONTROL, SYSTEM_MESSAGE_BETA, readable_error, usage_from
from llm.chat_model import ChatModel

MEMORY_TOOL_BETA = "context-management-2025-06-27"
"""The real API enables the memory tool type with this beta header."""
MAX_TOKENS = 1024


@dataclass
class AgentRun:
    messages: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    ttft_ms: float | None = None
    model_calls: int = 0
    hit_cap: bool = False

    @property
    def text(self) -> str:
        return "\n\n".join(part for part in self.texts if part)


class _StepStream:
    """Forwards streamed text, with the same blank line between steps' texts that
    `AgentRun.text` puts there, so what the lab streamed equals the reply it gets."""

    def __init__(self, on_text: TextCallback | None) -> None:
        self.on_text = on_text
        self.emitted = False
        self.step_started = False

    def new_step(self) -> None:
        self.step_started = False

    def __call__(self, chunk: str) -> None:
        if self.on_text is None or not chunk:
            return
        if self.emitted and not self.step_started:
            self.on_text("\n\n")
        self.step_started = self.emitted = True
        self.on_text(chunk)


def _block_param(block: Any) -> dict[str, Any]:
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


def run_sdk_agent(
    client: anthropic.Anthropic, model: str, system: str, messages: list[dict[str, Any]],
    tool: PostgresMemoryTool, max_iterations: int, on_text: TextCallback | None = None,
) -> AgentRun:
    """Stream each step of `tool_runner`; the runner executes the tool calls between steps."""
    run, started = AgentRun(), time.perf_counter()
    runner = client.beta.messages.tool_runner(
        model=model, max_tokens=MAX_TOKENS, system=[{"type": "text", "text": system}], messages=messages,
        tools=[tool], max_iterations=max_iterations, stream=True,
        thread=False,  # send the whole (persisted) history every step: append-only, so the prompt cache hits
        cache_control=CACHE_CONTROL, betas=[MEMORY_TOOL_BETA, SYSTEM_MESSAGE_BETA],
    )
    forward = _StepStream(on_text)
    try:
        for stream in runner:
            forward.new_step()
            for chunk in stream.text_stream:
                if run.ttft_ms is None:
                    run.ttft_ms = (time.perf_counter() - started) * 1000
                forward(chunk)
            message = stream.get_final_message()
            run.model_calls += 1
            run.usage = run.usage + usage_from(message.usage)
            run.texts.append("".join(block.text for block in message.content if block.type == "text"))
            content = replayable([_block_param(b) for b in message.content], message.stop_reason)
            run.messages.append({"role": "assistant", "content": content})
            if message.stop_reason == "tool_use":
                # Cached by the runner: the tools run once, and we keep the exact tool_result message it sends.
                response = runner.generate_tool_call_response()
                if response is not None:
                    run.messages.append(dict(response))
    except anthropic.APIError as error:
        raise readable_error(error) from None
    run.hit_cap = bool(run.messages) and run.messages[-1]["role"] == "user"
    return run


def run_function_agent(
    model: ChatModel, system: str, messages: list[dict[str, Any]], tool: PostgresMemoryTool,
    max_iterations: int, on_text: TextCallback | None = None,
) -> AgentRun:
    """The same loop for providers without the memory tool type (OpenAI-compatible)."""
    run, forward = AgentRun(), _StepStream(on_text)
    for _ in range(max_iterations):
        forward.new_step()
        response = model.chat(system, messages + run.messages, tools=[MEMORY_FUNCTION_TOOL], on_text=forward,
                              max_tokens=MAX_TOKENS)
        run.model_calls += 1
        run.usage = run.usage + response.usage
        run.ttft_ms = run.ttft_ms if run.ttft_ms is not None else response.ttft_ms
        run.texts.append(response.text)
        run.messages.append({"role": "assistant", "content": response.content or [{"type": "text", "text": ""}]})
        calls = [block for block in response.content if block.get("type") == "tool_use"]
        if response.stop_reason != "tool_use" or not calls:
            return run
        run.messages.append({"role": "user", "content": [_function_result(tool, call) for call in calls]})
    run.hit_cap = True
    return run


def _function_result(tool: PostgresMemoryTool, call: dict[str, Any]) -> dict[str, Any]:
    try:
        if call.get("name") != TOOL_NAME:
            raise ToolError(f"Unknown tool {call.get('name')!r}: the only tool is {TOOL_NAME!r}.")
        output, is_error = tool.call(call.get("input", {})), False
    except ToolError as error:
        output, is_error = str(error), True
    return {"type": "tool_result", "tool_use_id": call["id"], "content": output, "is_error": is_error}

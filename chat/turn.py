"""One chat turn, as every backend runs it: history + user message + injected notes ->
streamed model call (with a small tool loop) -> the turn persisted in order.

Nothing is written until the model has answered, so a failed call leaves the
conversation as it was (roles keep alternating) and the user can simply resend.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from backends.base import Recall, TextCallback, Timings, ToolCall, TurnContext, TurnResult, Usage
from chat.history import History
from chat.injection import system_message
from chat.prompts import CHAT_SYSTEM_PROMPT
from chat.store import ConversationStore, PendingMessage
from llm.chat_model import ChatModel, LLMError
from llm.pricing import estimate_cost

ToolHandler = Callable[[dict[str, Any]], str]
MAX_TOOL_ROUNDS = 4


class ChatTurnRunner:
    """The shared turn loop; backends differ only in recall, tools and after-turn work."""

    def __init__(self, backend: str, store: ConversationStore, history: History, model: ChatModel) -> None:
        self.backend = backend
        self.store = store
        self.history = history
        self.model = model

    def run(
        self,
        context: TurnContext,
        recall: Recall,
        on_text: TextCallback | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_handlers: dict[str, ToolHandler] | None = None,
    ) -> TurnResult:
        started = time.perf_counter()
        user_id = self.store.ensure_user(context.user_id)
        conversation = self.store.current_conversation(user_id, self.backend)
        pending = [PendingMessage({"role": "user", "content": context.text})]
        if recall.system_message:
            pending.append(PendingMessage(system_message(recall.system_message)))
        result = TurnResult(backend=self.backend, reply="", model_label=self.model.label, recall=recall,
                            conversation_id=str(conversation.id), user_message_id=str(pending[0].id))
        try:
            history = self.history.messages_for_request(user_id, conversation.id)
            reply, usage, ttft = self._call_with_tools(history, pending, result, on_text, tools, tool_handlers or {})
        except LLMError as error:
            result.error = str(error)
            result.timings = Timings(recall_ms=recall.recall_ms, total_ms=(time.perf_counter() - started) * 1000)
            return result
        total_ms = (time.perf_counter() - started) * 1000
        result.reply, result.usage = reply, usage
        result.timings = Timings(recall_ms=recall.recall_ms, ttft_ms=ttft, total_ms=total_ms + recall.recall_ms)
        result.cost_usd = estimate_cost(self.model, usage)
        pending[-1].metrics = self._metrics(result)
        self.store.append(conversation.id, user_id, pending)
        result.assistant_message_id = str(pending[-1].id)
        return result

    def _call_with_tools(
        self,
        history: list[dict[str, Any]],
        pending: list[PendingMessage],
        result: TurnResult,
        on_text: TextCallback | None,
        tools: list[dict[str, Any]] | None,
        handlers: dict[str, ToolHandler],
    ) -> tuple[str, Usage, float | None]:
        usage, ttft = Usage(), None
        for _ in range(MAX_TOOL_ROUNDS + 1):
            messages = history + [item.payload for item in pending]
            response = self.model.chat(CHAT_SYSTEM_PROMPT, messages, tools=tools, on_text=on_text)
            usage = usage + response.usage
            ttft = ttft if ttft is not None else response.ttft_ms
            pending.append(PendingMessage({"role": "assistant", "content": response.content or [{"type": "text", "text": ""}]}))
            calls = [block for block in response.content if block.get("type") == "tool_use"]
            if response.stop_reason != "tool_use" or not calls:
                return response.text, usage, ttft
            pending.append(PendingMessage({"role": "user", "content": [self._run_tool(c, handlers, result) for c in calls]}))
        raise LLMError(f"The model kept calling tools after {MAX_TOOL_ROUNDS} rounds; the turn was stopped.")

    @staticmethod
    def _run_tool(call: dict[str, Any], handlers: dict[str, ToolHandler], result: TurnResult) -> dict[str, Any]:
        handler = handlers.get(call["name"])
        try:
            if handler is None:
                raise ValueError(f"unknown tool {call['name']!r}")
            output, is_error = handler(call.get("input", {})), False
        except Exception as error:  # noqa: BLE001 - a tool error goes back to the model, not up the stack
            output, is_error = f"Error: {error}", True
        result.tool_calls.append(ToolCall(name=call["name"], input=call.get("input", {}), result=output[:2000], is_error=is_error))
        return {"type": "tool_result", "tool_use_id": call["id"], "content": output, "is_error": is_error}

    def _metrics(self, result: TurnResult) -> dict[str, Any]:
        return {
            "model": self.model.label,
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "cache_read_tokens": result.usage.cache_read_tokens,
            "cache_write_tokens": result.usage.cache_write_tokens,
            "recall_ms": result.timings.recall_ms,
            "ttft_ms": result.timings.ttft_ms,
            "total_ms": result.timings.total_ms,
            "details": {
                "recall": result.recall.model_dump(mode="json"),
                "tool_calls": [call.model_dump(mode="json") for call in result.tool_calls],
                "cost_usd": result.cost_usd,
            },
        }

"""One chat turn, as every backend runs it: history + user message + injected notes ->
an exchange step (one call, a tool loop, or the SDK's tool_runner) -> the turn persisted
in order, with the same metrics, errors and cut-reply marking for every column.

Nothing is written until the model has answered, so a failed call leaves the
conversation as it was (roles keep alternating) and the user can simply resend.
"""

from __future__ import annotations

import time
from typing import Any

from chat.errors import plain_error
from chat.exchange import ExchangeStep, ToolLoop
from chat.history import History
from chat.injection import system_message
from chat.prompts import CHAT_SYSTEM_PROMPT
from chat.store import ConversationStore, PendingMessage
from core import Exchange, Recall, TextCallback, Timings, TurnContext, TurnResult, UserErased
from llm.chat_model import ChatModel, LLMError
from llm.pricing import estimate_cost

CUT_NOTE = "(The reply was cut: it reached the model's output limit.)"


def cap_message(limit: int) -> str:
    return f"(The assistant stopped after {limit} steps without a final answer: its step limit was reached.)"


class ChatTurnRunner:
    """The shared turn pipeline; backends differ only in recall, the exchange step and after-turn work."""

    def __init__(self, backend: str, store: ConversationStore, history: History, model: ChatModel,
                 system_prompt: str = CHAT_SYSTEM_PROMPT) -> None:
        self.backend = backend
        self.store = store
        self.history = history
        self.model = model
        self.system_prompt = system_prompt

    def run(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None,
            step: ExchangeStep | None = None, step_limit: int | None = None) -> TurnResult:
        try:
            return self._run(context, recall, on_text, step, step_limit)
        except UserErased as error:  # erased before or during the turn: nothing was (or stays) written
            return TurnResult(backend=self.backend, reply="", model_label=self.model.label, recall=recall, error=str(error))

    def _run(self, context: TurnContext, recall: Recall, on_text: TextCallback | None,
             step: ExchangeStep | None, step_limit: int | None) -> TurnResult:
        started = time.perf_counter()
        user_id = self.store.active_user(context.user_id)
        conversation = self.store.current_conversation(user_id, self.backend)
        pending = [PendingMessage({"role": "user", "content": context.text})]
        if recall.system_message:
            pending.append(PendingMessage(system_message(recall.system_message)))
        result = TurnResult(backend=self.backend, reply="", model_label=self.model.label, recall=recall,
                            conversation_id=str(conversation.id), user_message_id=str(pending[0].id))
        try:
            history = self.history.messages_for_request(user_id, conversation.id)
            result.history_messages = len(history)
            exchange = (step or ToolLoop())(self.model, self.system_prompt, history + [p.payload for p in pending], on_text)
        except LLMError as error:
            result.error = plain_error(error)
            result.timings = Timings(recall_ms=recall.recall_ms, total_ms=(time.perf_counter() - started) * 1000)
            return result
        self._finish(result, exchange, started, step_limit)
        pending += [PendingMessage(_non_empty(message)) for message in exchange.messages]
        if exchange.hit_cap:
            pending.append(PendingMessage({"role": "assistant", "content": [{"type": "text", "text": result.error}]}))
        pending[-1].metrics = self._metrics(result, exchange)
        self.store.append(conversation.id, user_id, pending)
        result.assistant_message_id = str(pending[-1].id)
        return result

    def _finish(self, result: TurnResult, exchange: Exchange, started: float, step_limit: int | None) -> None:
        result.reply, result.usage = exchange.text, exchange.usage
        result.prompt_tokens = exchange.largest_prompt_tokens
        result.tool_calls, result.read_texts = exchange.tool_calls, exchange.read_texts
        result.truncated = exchange.stop_reason == "max_tokens"
        if exchange.hit_cap:
            # Cut at the step limit, the run ends with tool results the model never answered: the
            # stop note is persisted as the assistant's message (labelled, not invented content).
            result.error = cap_message(step_limit or exchange.model_calls)
            result.reply = "\n\n".join(part for part in (exchange.text, result.error) if part)
        total_ms = (time.perf_counter() - started) * 1000
        result.timings = Timings(recall_ms=result.recall.recall_ms, ttft_ms=exchange.ttft_ms,
                                 total_ms=total_ms + result.recall.recall_ms)
        result.cost_usd = estimate_cost(self.model, exchange.usage)

    def _metrics(self, result: TurnResult, exchange: Exchange) -> dict[str, Any]:
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
                "model_calls": exchange.model_calls,
                "hit_step_limit": exchange.hit_cap,
                "truncated": result.truncated,
                "cost_usd": result.cost_usd,
            },
        }


def _non_empty(message: dict[str, Any]) -> dict[str, Any]:
    """The API rejects a replayed message with no content or blank text, which would break
    every later turn of the conversation; an empty reply is stored as a visible marker."""
    content = message.get("content")
    if isinstance(content, str):
        return message
    blocks = [b for b in content if b.get("type") != "text" or str(b.get("text", "")).strip()]
    return {**message, "content": blocks or [{"type": "text", "text": "(empty reply)"}]}

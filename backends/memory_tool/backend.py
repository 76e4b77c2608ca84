"""The memory-tool column: Claude manages its own files under /memories.

Nothing is recalled or injected for this backend: the agent views and edits its files
through the memory tool during the turn, and what it read is reported as `read_texts`.
The whole exchange (assistant tool_use, user tool_result, final answer) is persisted in
order after the user message, so the next turn's request starts with the same messages
and the prompt cache keeps hitting; a failed model call persists nothing.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from anthropic.lib.tools import ToolError
from sqlalchemy import delete, select
from sqlmodel import Session

from backends.base import (
    ErasureReport, MemoryBackend, MemoryRecord, Recall, TextCallback, Timings, TurnContext, TurnResult,
)
from backends.erasure import erase_conversations
from backends.memory_tool.agent import AgentRun, run_function_agent, run_sdk_agent
from backends.memory_tool.expiry import expire_unused_files
from backends.memory_tool.prompts import MEMORY_AGENT_SYSTEM_PROMPT
from backends.memory_tool.records import file_records, find_line, line_matches, parse_record_id, topic_words
from backends.memory_tool.store import MemoryFileStore
from backends.memory_tool.tool import PostgresMemoryTool
from backends.runtime import Runtime
from chat.store import PendingMessage
from db.models import Job, MemoryFile
from llm.chat_model import LLMError
from llm.pricing import estimate_cost

JOB_KIND_PREFIX = "memory_tool."
EDIT_ATTEMPTS = 3
"""Line deletions retry when the agent edited the same file in between (compare-and-write)."""


def cap_message(limit: int) -> str:
    return f"(The memory agent stopped after {limit} steps without a final answer: its step limit was reached.)"


class MemoryToolBackend(MemoryBackend):
    name = "memory_tool"
    label = "Memory-tool agent"
    description = "Claude keeps its own notes in files under /memories, through Anthropic's memory tool."

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def file_store(self, user_id: str) -> MemoryFileStore:
        """The store bound to a server-session user id (the only way this backend reaches files)."""
        return MemoryFileStore(self.runtime.engine, user_id, self.runtime.clock)

    # -- a turn ------------------------------------------------------------------
    def prepare_turn(self, context: TurnContext) -> Recall:
        return Recall()  # nothing injected: the agent recalls by itself, with the memory tool

    def run_turn(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None) -> TurnResult:
        started = time.perf_counter()
        store = self.runtime.store
        user_id = store.ensure_user(context.user_id)
        conversation = store.current_conversation(user_id, self.name)
        model = self.runtime.chat_model
        user_message = PendingMessage({"role": "user", "content": context.text})
        result = TurnResult(backend=self.name, reply="", model_label=model.label, recall=recall,
                            conversation_id=str(conversation.id), user_message_id=str(user_message.id))
        tool = PostgresMemoryTool(self.file_store(user_id), enabled=not context.knobs.incognito)
        try:
            history = self.runtime.history.messages_for_request(user_id, conversation.id)
            run = self._run_agent(history + [user_message.payload], tool, on_text)
        except LLMError as error:
            result.error = str(error)
            result.timings = Timings(total_ms=(time.perf_counter() - started) * 1000)
        else:
            self._finish(result, run, started)
            pending = [user_message, *self._exchange(run)]
            pending[-1].metrics = self._metrics(result, run)
            store.append(conversation.id, user_id, pending)
            result.assistant_message_id = str(pending[-1].id)
        result.tool_calls, result.read_texts = tool.calls, tool.read_texts
        return result

    def _run_agent(self, messages: list[dict[str, Any]], tool: PostgresMemoryTool,
                   on_text: TextCallback | None) -> AgentRun:
        model, limit = self.runtime.chat_model, self.runtime.settings.agent_max_iterations
        if model.provider == "openai":
            return run_function_agent(model, MEMORY_AGENT_SYSTEM_PROMPT, messages, tool, limit, on_text)
        client = model.client  # type: ignore[attr-defined]  (AnthropicChat: the real API or the offline model)
        return run_sdk_agent(client, model.model, MEMORY_AGENT_SYSTEM_PROMPT, messages, tool, limit, on_text)

    def _finish(self, result: TurnResult, run: AgentRun, started: float) -> None:
        limit = self.runtime.settings.agent_max_iterations
        result.reply = run.text
        if run.hit_cap:
            result.error = cap_message(limit)
            result.reply = "\n\n".join(part for part in (run.text, cap_message(limit)) if part)
        result.usage = run.usage
        result.cost_usd = estimate_cost(self.runtime.chat_model, run.usage)
        result.timings = Timings(ttft_ms=run.ttft_ms, total_ms=(time.perf_counter() - started) * 1000)

    def _exchange(self, run: AgentRun) -> list[PendingMessage]:
        """The run's messages, closed by an assistant message so roles keep alternating.

        A run cut at the step limit ends with tool results the model never answered; the
        stop note is persisted as the assistant's message (labelled, not invented content)
        so the next user message can follow it.
        """
        messages = [PendingMessage(_non_empty(message)) for message in run.messages]
        if run.hit_cap:
            limit = self.runtime.settings.agent_max_iterations
            messages.append(PendingMessage({"role": "assistant", "content": [{"type": "text", "text": cap_message(limit)}]}))
        return messages

    def _metrics(self, result: TurnResult, run: AgentRun) -> dict[str, Any]:
        return {
            "model": self.runtime.chat_model.label,
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "cache_read_tokens": result.usage.cache_read_tokens,
            "cache_write_tokens": result.usage.cache_write_tokens,
            "recall_ms": 0.0,
            "ttft_ms": result.timings.ttft_ms,
            "total_ms": result.timings.total_ms,
            "details": {
                "tool_calls": [call.model_dump(mode="json") for call in result.tool_calls],
                "model_calls": run.model_calls,
                "hit_step_limit": run.hit_cap,
                "cost_usd": result.cost_usd,
            },
        }

    # -- conversations -----------------------------------------------------------
    def new_conversation(self, user_id: str) -> None:
        self.runtime.store.end_conversations(user_id, self.name)

    # -- what is stored ----------------------------------------------------------
    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        """One record per non-empty line of the user's files (expired files are deleted, so
        there is nothing inactive to add)."""
        ttl = self.runtime.settings.memory_file_ttl_days
        return [record for file in self.file_store(user_id).files() for record in file_records(file, ttl)]

    def stored_texts(self, user_id: str) -> list[str]:
        """Every non-empty line of the user's files, headings included (the evals' definition)."""
        return [line.strip() for file in self.file_store(user_id).files() for line in file.content.split("\n") if line.strip()]

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        """Delete one line (a record of `list_memories`) from its file."""
        target = parse_record_id(memory_id)
        file_id = _uuid(target.file_id) if target is not None else None
        if target is None or file_id is None:
            return False
        store = self.file_store(user_id)
        for _ in range(EDIT_ATTEMPTS):
            with Session(self.runtime.engine) as session:
                file = session.scalars(select(MemoryFile).where(MemoryFile.id == file_id, MemoryFile.user_id == user_id)).first()
            if file is None:
                return False
            lines = file.content.split("\n")
            index = find_line(lines, target)
            if index is None:
                return False
            del lines[index]
            if self._rewrite(store, file, lines):
                return True
        return False

    def forget(self, user_id: str, topic: str) -> list[MemoryRecord]:
        """Delete every line about the topic (see `records.line_matches`); returns them."""
        words = topic_words(topic)
        store, ttl = self.file_store(user_id), self.runtime.settings.memory_file_ttl_days
        deleted: list[MemoryRecord] = []
        for file in store.files():
            for _ in range(EDIT_ATTEMPTS):
                gone = [record for record in file_records(file, ttl) if line_matches(record.content, words)]
                drop = {record.extra["line"] for record in gone}
                kept = [line for number, line in enumerate(file.content.split("\n"), start=1) if number not in drop]
                if not gone or self._rewrite(store, file, kept):
                    deleted.extend(gone)
                    break
                file = store.get(file.path)  # changed meanwhile: match again on the new text
                if file is None:
                    break
        return deleted

    @staticmethod
    def _rewrite(store: MemoryFileStore, file: MemoryFile, lines: list[str]) -> bool:
        """Save the remaining lines (a file left with nothing but headings is deleted), only if
        the file still holds what they were computed from; False when it changed meanwhile."""
        try:
            if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
                store.write(file.path, "\n".join(lines), expected=file.content)
            else:
                store.delete(file.path, expected=file.content)
        except ToolError:
            return False
        return True

    def erase_user(self, user_id: str) -> ErasureReport:
        deleted = {"memory_files": self.file_store(user_id).delete_all()}
        deleted.update(erase_conversations(self.runtime.engine, user_id, self.name))
        with Session(self.runtime.engine) as session:
            deleted["jobs"] = session.execute(
                delete(Job).where(Job.user_id == user_id, Job.kind.startswith(JOB_KIND_PREFIX))).rowcount
            session.commit()
        return ErasureReport(backend=self.name, user_id=user_id, deleted=deleted)

    def sweep(self) -> dict[str, int]:
        ttl = self.runtime.settings.memory_file_ttl_days
        return {"expired_files": expire_unused_files(self.runtime.engine, self.runtime.clock, ttl)}


def _non_empty(message: dict[str, Any]) -> dict[str, Any]:
    """The API rejects a replayed message with no content or blank text, which would break
    every later turn of the conversation; an empty reply is stored as a visible marker."""
    blocks = [b for b in message["content"] if b.get("type") != "text" or str(b.get("text", "")).strip()]
    return {**message, "content": blocks or [{"type": "text", "text": "(empty reply)"}]}


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None

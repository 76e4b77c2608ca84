"""The memory-tool column: Claude manages its own files under /memories.

Nothing is recalled or injected for this backend: the agent views and edits its files
through the memory tool during the turn, and what it read is reported as `read_texts`.
The whole exchange (assistant tool_use, user tool_result, final answer) is persisted in
order after the user message, so the next turn's request starts with the same messages
and the prompt cache keeps hitting; a failed model call persists nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from anthropic.lib.tools import ToolError
from sqlalchemy import delete, select
from sqlmodel import Session

from backends.base import ErasureReport, MemoryBackend, MemoryRecord, Recall, TextCallback, TurnContext, TurnResult
from backends.conversation_erasure import erase_conversations
from backends.memory_tool.expiry import expire_unused_files
from backends.memory_tool.function_tool import MEMORY_FUNCTION_TOOL
from backends.memory_tool.prompts import MEMORY_AGENT_SYSTEM_PROMPT
from backends.memory_tool.records import file_records, find_line, line_matches, parse_record_id, topic_words
from backends.memory_tool.store import MemoryFileStore
from backends.memory_tool.tool import TOOL_NAME, PostgresMemoryTool
from backends.services import Services
from chat.exchange import ExchangeStep, ToolLoop, ToolRunnerStep
from chat.turn import ChatTurnRunner
from core import Exchange
from db.models import Job, MemoryFile
from llm.chat_model import ChatModel

JOB_KIND_PREFIX = "memory_tool."
EDIT_ATTEMPTS = 3
"""Line deletions retry when the agent edited the same file in between (compare-and-write)."""


@dataclass
class RecordedBy:
    """An exchange step whose tool calls and read texts are the memory tool's own records
    (command, path, and what the agent read), whichever driver ran the tool."""

    step: ExchangeStep
    tool: PostgresMemoryTool

    def __call__(self, model: ChatModel, system: str, messages: list[dict[str, Any]],
                 on_text: TextCallback | None) -> Exchange:
        exchange = self.step(model, system, messages, on_text)
        exchange.tool_calls, exchange.read_texts = self.tool.calls, self.tool.read_texts
        return exchange


class MemoryToolBackend(MemoryBackend):
    name = "memory_tool"
    label = "Memory-tool agent"
    description = "Claude keeps its own notes in files under /memories, through Anthropic's memory tool."

    def __init__(self, runtime: Services) -> None:
        self.runtime = runtime
        self.runner = ChatTurnRunner(self.name, runtime.store, runtime.history, runtime.chat_model,
                                     system_prompt=MEMORY_AGENT_SYSTEM_PROMPT)

    def file_store(self, user_id: str) -> MemoryFileStore:
        """The store bound to a server-session user id (the only way this backend reaches files)."""
        return MemoryFileStore(self.runtime.engine, user_id, self.runtime.clock)

    # -- a turn ------------------------------------------------------------------
    def prepare_turn(self, context: TurnContext) -> Recall:
        return Recall()  # nothing injected: the agent recalls by itself, with the memory tool

    def run_turn(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None) -> TurnResult:
        tool = PostgresMemoryTool(self.file_store(context.user_id), enabled=not context.knobs.incognito)
        limit = self.runtime.settings.agent_max_iterations
        return self.runner.run(context, recall, on_text, step=RecordedBy(self._step(tool, limit), tool), step_limit=limit)

    def _step(self, tool: PostgresMemoryTool, limit: int) -> ExchangeStep:
        """The SDK's tool_runner where the provider has one; elsewhere the same commands as a function tool."""
        if self.runtime.chat_model.supports_tool_runner:
            return ToolRunnerStep(tools=[tool], max_iterations=limit)
        return ToolLoop(tools=[MEMORY_FUNCTION_TOOL], handlers={TOOL_NAME: tool.call}, max_rounds=limit - 1,
                        cap_is_error=False)

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
                drop = {record.location.line for record in gone if record.location}
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


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None

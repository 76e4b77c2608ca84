"""The no-memory baseline: the same chat with nothing recalled and nothing stored, so the
lab can show what an answer looks like without memory (and what memory costs)."""

from __future__ import annotations

from backends.base import ErasureReport, MemoryBackend, MemoryRecord, Recall, TextCallback, TurnContext, TurnResult
from backends.conversation_erasure import erase_conversations
from backends.plugin import BackendPlugin
from backends.services import Services
from chat.turn import ChatTurnRunner


class BaselineBackend(MemoryBackend):
    name = "none"
    label = "No memory (baseline)"
    description = "The same model with no long-term memory."

    def __init__(self, runtime: Services) -> None:
        self.runtime = runtime
        self.runner = ChatTurnRunner(self.name, runtime.store, runtime.history, runtime.chat_model)

    def prepare_turn(self, context: TurnContext) -> Recall:
        return Recall(skipped_reason="no memory")

    def run_turn(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None) -> TurnResult:
        return self.runner.run(context, recall, on_text)

    def new_conversation(self, user_id: str) -> None:
        self.runtime.store.end_conversations(user_id, self.name)

    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        return []

    def erase_user(self, user_id: str) -> ErasureReport:
        return ErasureReport(backend=self.name, user_id=user_id, deleted=erase_conversations(self.runtime.engine, user_id, self.name))


PLUGIN = BackendPlugin(name=BaselineBackend.name, build=BaselineBackend)

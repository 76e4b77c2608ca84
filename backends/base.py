"""The one interface every memory backend implements.

The lab, the evals and the benchmarks only talk to `MemoryBackend`, so a column in the UI,
an eval score and a benchmark row mean the same thing for Mem0, our pipeline, the
memory-tool agent and the no-memory baseline. A turn is three steps (prepare: recall;
run: the model call; after: background work) so each can be timed and shown separately.
"""

from __future__ import annotations

import abc
from datetime import datetime

from core import (  # noqa: F401  (re-exported: the interface's vocabulary)
    ErasureReport, Knobs, MemoryRecord, MemoryStatus, Note, NoteStatus, Recall, TextCallback, Timings, ToolCall,
    TurnContext, TurnResult, Usage, UserErased,
)
from backends.note_gate import gate_ranked
from chat.injection import format_notes


class MemoryBackend(abc.ABC):
    """One column of the lab."""

    name: str
    label: str
    description: str = ""
    recalls_by_vector: bool = False
    """True when prepare_turn searches by the message's embedding (TurnContext.query_vector):
    the lab embeds the message once for all such backends and starts the others at once."""

    def warm_up(self) -> None:
        """Load now what the first turn would otherwise load (a library, a pool); the lab
        calls it in the background at start. Default: nothing to load."""

    # -- a turn ------------------------------------------------------------------
    @abc.abstractmethod
    def prepare_turn(self, context: TurnContext) -> Recall:
        """Recall: decide what to inject, before the model call."""

    @abc.abstractmethod
    def run_turn(self, context: TurnContext, recall: Recall, on_text: TextCallback | None = None) -> TurnResult:
        """Call the model (streaming text to `on_text`) and persist the turn."""

    def select_notes(self, notes: list[Note], knobs: Knobs) -> list[Note]:
        """Set each candidate's status under these knobs; returns the injected ones.

        The default gates in the order recall ranked them; a backend with its own rules
        (procedural notes always in, say) overrides it, and `regate` then follows them.
        """
        injected: list[Note] = []
        gate_ranked(notes, knobs, knobs.max_memory_tokens, injected)
        return injected

    def regate(self, recall: Recall, knobs: Knobs) -> Recall:
        """The same candidates under new knobs, without searching again.

        Lets a slider answer at once: which notes would now go in, which are cut and why.
        """
        if recall.skipped_reason is not None:
            return recall
        notes = [note.model_copy() for note in recall.notes]
        injected = self.select_notes(notes, knobs)
        notes.sort(key=lambda n: n.status != "injected")
        return recall.model_copy(update={"notes": notes, "system_message": format_notes(injected)})

    def after_turn(self, context: TurnContext, result: TurnResult) -> list[int]:
        """Queue background work (extraction, Mem0 add); returns the job ids."""
        return []

    def turn(self, context: TurnContext, on_text: TextCallback | None = None) -> TurnResult:
        """The whole turn as the lab and the evals run it."""
        recall = Recall(skipped_reason="incognito") if context.knobs.incognito else self.prepare_turn(context)
        result = self.run_turn(context, recall, on_text)
        if not context.knobs.incognito and result.error is None:
            try:
                result.jobs = self.after_turn(context, result)
            except UserErased as error:  # erased between the turn's commit and its jobs: the erasure stands
                result.error = str(error)
        return result

    # -- conversations -----------------------------------------------------------
    @abc.abstractmethod
    def new_conversation(self, user_id: str) -> None:
        """End the current conversation; the next turn starts a fresh one."""

    # -- what is stored ----------------------------------------------------------
    def remember(self, user_id: str, text: str, kind: str = "semantic", created_at: datetime | None = None) -> str:
        """Store one memory through the backend's own write path, without a chat model
        (benchmarks load labelled memories this way); returns its id."""
        raise NotImplementedError(f"{self.label} cannot store a memory directly")

    @abc.abstractmethod
    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        """The user's memories; superseded/retracted/expired ones only when asked."""

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        """Hard-delete one memory (every version of its lineage where there are versions)."""
        return False

    def forget(self, user_id: str, topic: str) -> list[MemoryRecord]:
        """Delete what is remembered about a topic; returns what was deleted."""
        return []

    @abc.abstractmethod
    def erase_user(self, user_id: str) -> ErasureReport:
        """Delete every copy of the user's data this backend holds; says where."""

    def erased_tables(self) -> list[str]:
        """Tables of this backend's own (beyond the lab's) that erasure must compact afterwards."""
        return []

    def stored_texts(self, user_id: str) -> list[str]:
        """Live memory texts (for the memory-tool agent: non-empty lines of the user's files)."""
        return [record.content for record in self.list_memories(user_id)]

    def all_texts(self, user_id: str) -> list[str]:
        """Every text this backend keeps about the user, in any store (for erasure checks)."""
        return [record.content for record in self.list_memories(user_id, include_inactive=True)]

    def sweep(self) -> dict[str, int]:
        """Nightly forgetting work; returns counts by reason."""
        return {}

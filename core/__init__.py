"""The bottom layer: the types every other package speaks (turns, recall notes, usage,
knobs, memory records, events). It imports nothing of the lab, so `llm`, `chat`,
`backends`, `jobs`, `ui` and `evals` can all depend on it without a cycle."""

from core.events import NotedEvent, NotedMemory
from core.exchange import Exchange
from core.knobs import KNOBS, KnobSpec, Knobs
from core.recall import Note, NoteStatus, Recall
from core.records import ErasureReport, MemoryRecord, MemoryStatus
from core.turn import TextCallback, Timings, ToolCall, TurnContext, TurnResult
from core.usage import Usage
from core.user_ids import InvalidUserId, UserErased, normalise_user_id

__all__ = [
    "KNOBS", "ErasureReport", "Exchange", "InvalidUserId", "KnobSpec", "Knobs", "MemoryRecord", "MemoryStatus", "Note",
    "NoteStatus", "NotedEvent", "NotedMemory", "Recall", "TextCallback", "Timings", "ToolCall", "TurnContext",
    "TurnResult", "Usage", "UserErased", "normalise_user_id",
]

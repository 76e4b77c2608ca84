"""The `forget` tool the chat model may call when the user asks to forget something, and
the one rule for which stored memories a topic matches. Every recalling backend offers
the same tool with the same rule, so the columns compare like for like.

The handler is built per turn around the SERVER-side user id: the model supplies only a
topic, so no tool input can ever reach another user's memories.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from backends.base import MemoryRecord
from chat.exchange import ToolLoop

FORGET_MIN_SIMILARITY = 0.25
FORGET_MARGIN = 0.10
"""A forget topic is short ("where I live" vs "User lives in Pune." scores 0.29 with MiniLM),
so the floor is low; deleting only matches within a margin of the best one keeps "I live in
Pune" (0.76) from also taking "User is in Goa this week" (0.41) with it."""
FORGET_CANDIDATES = 10


def matching(nearest: list[tuple[str, float]], min_similarity: float = FORGET_MIN_SIMILARITY,
             margin: float = FORGET_MARGIN) -> list[str]:
    """Ids (nearest first, as (id, cosine)) that a forget topic is about."""
    floor = max(min_similarity, (nearest[0][1] - margin) if nearest else min_similarity)
    return [memory_id for memory_id, similarity in nearest if similarity >= floor]

FORGET_TOOL: dict[str, Any] = {
    "name": "forget",
    "description": (
        "Permanently delete what is remembered about a topic, when the user asks you to forget, stop remembering "
        "or delete something about them. Every version of each matching memory is deleted. Returns the deleted notes."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"topic": {"type": "string", "description": "What to forget, in the user's words"}},
        "required": ["topic"],
    },
}


def forget_handler(forget: Callable[[str], list[MemoryRecord]]) -> Callable[[dict[str, Any]], str]:
    """Wrap `forget(topic)` (already bound to the session's user) as a tool handler."""

    def handle(tool_input: dict[str, Any]) -> str:
        topic = str(tool_input.get("topic", "")).strip()
        if not topic:
            raise ValueError("topic is required")
        deleted = forget(topic)
        # One line per deleted fact (the live version's text), not one per stored version.
        facts = sorted({record.content for record in deleted if record.status == "live"} or {r.content for r in deleted})
        return json.dumps({"deleted_count": len(deleted), "deleted_notes": facts}, ensure_ascii=False)

    return handle


def forget_step(forget: Callable[[str], list[MemoryRecord]]) -> ToolLoop:
    """The exchange step of a recalling backend's turn: the chat with the `forget` tool."""
    return ToolLoop(tools=[FORGET_TOOL], handlers={"forget": forget_handler(forget)})

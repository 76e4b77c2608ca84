"""The `forget` tool the chat model may call when the user asks to forget something.

The handler is built per turn around the SERVER-side user id: the model supplies only a
topic, so no tool input can ever reach another user's memories.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from backends.base import MemoryRecord

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

"""The open conversation of a user with a backend, read from the messages table.

A browser session that opens the lab mid-conversation (reload, second tab, user switch)
shows what the backend will actually continue from, not an empty column.
"""

from __future__ import annotations

import json

from sqlalchemy import Engine, select
from sqlmodel import Session

from db.models import Conversation, Message

Line = tuple[str, str, str | None]
"""(role, text, model label or None)."""


def _is_tool_result(message: Message) -> bool:
    content = json.loads(message.payload).get("content")
    return isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)


def open_transcript(engine: Engine, user_id: str, backend: str) -> list[Line]:
    """User and assistant text of the user's open conversation with this backend (read only)."""
    with Session(engine) as session:
        conversation_id = session.scalars(
            select(Conversation.id)
            .where(Conversation.user_id == user_id, Conversation.backend == backend, Conversation.ended_at.is_(None))
            .order_by(Conversation.started_at.desc())
        ).first()
        if conversation_id is None:
            return []
        messages = session.scalars(
            select(Message)
            .where(Message.conversation_id == conversation_id, Message.user_id == user_id, Message.role != "system")
            .order_by(Message.seq)
        ).all()
    lines: list[Line] = []
    for message in messages:
        if message.role == "user" and _is_tool_result(message):
            continue
        if message.text.strip():
            lines.append((message.role, message.text, message.model))
    return lines

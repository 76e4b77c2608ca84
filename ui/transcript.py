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


def visible_text(message: Message) -> str:
    """What a person saw of the message: its text blocks (not tool calls or tool results)."""
    content = json.loads(message.payload).get("content")
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if block.get("type") == "text")


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
        text = visible_text(message)
        if text.strip():
            lines.append((message.role, text, message.model))
    return lines

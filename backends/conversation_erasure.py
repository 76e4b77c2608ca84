"""Hard deletion of the rows every backend shares (conversations, messages including the
injected system rows, summaries, events), scoped to one user and one backend."""

from __future__ import annotations

from sqlalchemy import Engine, delete, select
from sqlmodel import Session

from db.models import Conversation, ConversationSummary, EventLog, Message


def erase_conversations(engine: Engine, user_id: str, backend: str) -> dict[str, int]:
    """Delete the user's conversations with one backend and everything hanging off them."""
    with Session(engine) as session:
        ids = list(session.scalars(select(Conversation.id).where(Conversation.user_id == user_id, Conversation.backend == backend)))
        counts = {
            "summaries": session.execute(delete(ConversationSummary).where(ConversationSummary.user_id == user_id, ConversationSummary.conversation_id.in_(ids))).rowcount,
            "messages": session.execute(delete(Message).where(Message.user_id == user_id, Message.conversation_id.in_(ids))).rowcount,
            "conversations": session.execute(delete(Conversation).where(Conversation.user_id == user_id, Conversation.id.in_(ids))).rowcount,
            "events": session.execute(delete(EventLog).where(EventLog.user_id == user_id, EventLog.backend == backend)).rowcount,
        }
        session.commit()
    return counts

"""Users, conversations and messages in Postgres, per user and backend.

A message's `payload` is the exact JSON text of the message param that was sent, so the
history loaded for turn N+1 starts with the same bytes as turn N's request.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, func, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlmodel import Session

from clock import Clock, clock as default_clock
from core.user_ids import InvalidUserId, UserErased, normalise_user_id  # noqa: F401  (re-exported for callers of the store)
from db.models import Conversation, Message, User
from db.tombstones import Tombstones, lock_user, tombstones_for
from settings import get_settings

def dumps(payload: dict[str, Any]) -> str:
    """One canonical JSON text for a message param (stable bytes for the prompt cache)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def plain_text(payload: dict[str, Any]) -> str:
    """The human-readable text of a message, for display, search and erasure checks."""
    content = payload.get("content", "")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            parts.append(f"[tool {block.get('name')}: {json.dumps(block.get('input', {}), ensure_ascii=False)}]")
        elif block.get("type") == "tool_result":
            inner = block.get("content", "")
            parts.append(inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False))
    return "\n".join(parts)


@dataclass
class PendingMessage:
    """A message of the current turn, written only once the model has answered."""

    payload: dict[str, Any]
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def role(self) -> str:
        return self.payload["role"]


class ConversationStore:
    def __init__(self, engine: Engine, clock: Clock = default_clock, tombstones: Tombstones | None = None) -> None:
        self.engine = engine
        self.clock = clock
        self.tombstones = tombstones or tombstones_for(get_settings())

    # -- users -----------------------------------------------------------------
    def ensure_user(self, user_id: str, display_name: str | None = None, lab_user: bool = False) -> str:
        """Create the user deliberately (the lab's "Create user", the evals): an erased name may
        be created again, as a new, empty user. Turns use `active_user`, which may not.
        `lab_user` marks one a person made in the lab's picker (an existing user named there
        is marked too: the person asked for it)."""
        user_id = normalise_user_id(user_id)
        with Session(self.engine) as session:
            self.tombstones.lift(session.connection(), user_id)
            self._insert_user(session, user_id, display_name, lab_user)
            if lab_user:
                session.execute(update(User).where(User.id == user_id, User.lab_user.is_(False)).values(lab_user=True))
            session.commit()
        return user_id

    def active_user(self, user_id: str) -> str:
        """The user a turn writes for: created on a first turn, but never re-created after an
        erasure (UserErased), so a turn in flight cannot bring an erased user back."""
        user_id = normalise_user_id(user_id)
        with Session(self.engine) as session:
            # One creation at a time per id, so the check and the insert see the same tombstones.
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"users:{user_id}"})
            if session.get(User, user_id) is None:
                if self.tombstones.is_erased(session.connection(), user_id):
                    raise UserErased()
                self._insert_user(session, user_id, None)
            session.commit()
        return user_id

    def _insert_user(self, session: Session, user_id: str, display_name: str | None, lab_user: bool = False) -> None:
        statement = pg_insert(User).values(id=user_id, display_name=display_name or user_id, created_at=self.clock.now(),
                                           lab_user=lab_user)
        session.execute(statement.on_conflict_do_nothing(index_elements=["id"]))

    def list_users(self, lab_only: bool = False) -> list[str]:
        """Every user, or (lab_only) the ones made in the lab's picker, oldest first."""
        query = select(User.id).order_by(User.created_at, User.id)
        if lab_only:
            query = query.where(User.lab_user.is_(True))
        with Session(self.engine) as session:
            return list(session.scalars(query))

    # -- conversations -----------------------------------------------------------
    def current_conversation(self, user_id: str, backend: str) -> Conversation:
        """The open conversation of this user with this backend, started if there is none."""
        with Session(self.engine, expire_on_commit=False) as session:  # no re-read by id after the INSERT
            found = session.scalars(
                select(Conversation)
                .where(Conversation.user_id == user_id, Conversation.backend == backend, Conversation.ended_at.is_(None))
                .order_by(Conversation.started_at.desc())
            ).first()
            if found is not None:
                return found
            lock_user(session, user_id)
            now = self.clock.now()
            conversation = Conversation(user_id=user_id, backend=backend, started_at=now, last_activity_at=now)
            session.add(conversation)
            session.commit()
            return conversation

    def end_conversations(self, user_id: str, backend: str) -> list[uuid.UUID]:
        """Close the user's open conversations with this backend; returns their ids."""
        with Session(self.engine) as session:
            ended = session.scalars(
                update(Conversation)
                .where(Conversation.user_id == user_id, Conversation.backend == backend, Conversation.ended_at.is_(None))
                .values(ended_at=self.clock.now())
                .returning(Conversation.id)
            ).all()
            session.commit()
        return list(ended)

    # -- messages ----------------------------------------------------------------
    def load_messages(self, conversation_id: uuid.UUID, user_id: str) -> list[Message]:
        with Session(self.engine) as session:
            return list(
                session.scalars(
                    select(Message)
                    .where(Message.conversation_id == conversation_id, Message.user_id == user_id)
                    .order_by(Message.seq)
                )
            )

    def payloads(self, messages: list[Message]) -> list[dict[str, Any]]:
        return [json.loads(message.payload) for message in messages]

    def append(self, conversation_id: uuid.UUID, user_id: str, pending: list[PendingMessage]) -> list[uuid.UUID]:
        """Write a turn's messages in order, in one transaction (a failed turn writes nothing)."""
        now = self.clock.now()
        with Session(self.engine) as session:
            session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": str(conversation_id)})
            lock_user(session, user_id)
            # Only erasure deletes conversations: one gone mid-turn means the user is being erased.
            if session.execute(text("SELECT 1 FROM conversations WHERE id = :id AND user_id = :user FOR KEY SHARE"),
                               {"id": conversation_id, "user": user_id}).first() is None:
                raise UserErased()
            last = session.scalar(select(func.max(Message.seq)).where(Message.conversation_id == conversation_id,
                                                                      Message.user_id == user_id))
            seq = -1 if last is None else last
            for item in pending:
                seq += 1
                session.add(
                    Message(
                        id=item.id, conversation_id=conversation_id, user_id=user_id, seq=seq, role=item.role,
                        payload=dumps(item.payload), text=plain_text(item.payload), created_at=now, **item.metrics,
                    )
                )
            session.execute(
                update(Conversation).where(Conversation.id == conversation_id, Conversation.user_id == user_id)
                .values(last_activity_at=now)
            )
            session.commit()
        return [item.id for item in pending]

    def message_text(self, user_id: str, message_id: str | uuid.UUID) -> str | None:
        with Session(self.engine) as session:
            return session.scalar(select(Message.text).where(Message.id == uuid.UUID(str(message_id)),
                                                             Message.user_id == user_id))

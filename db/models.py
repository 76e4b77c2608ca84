"""The tables, as SQLModel classes.

The embedding column is declared without a dimension here because the dimension belongs
to the configured embedder, not to the code: `db.schema.ensure_schema` fixes it on a new
database and refuses to start when it differs from an existing one.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Optional

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

MEMORY_KINDS = ("semantic", "episodic", "procedural")
MESSAGE_ROLES = ("user", "assistant", "system")
JOB_STATES = ("queued", "running", "done", "dead")


def _ts(nullable: bool = True, **kwargs: Any) -> Any:
    """A timezone-aware timestamp column; every time in the lab is UTC."""
    return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=nullable, **kwargs))


def _fk(target: str, nullable: bool = False, on_delete: str = "CASCADE") -> Any:
    return Field(sa_column=Column(ForeignKey(target, ondelete=on_delete), nullable=nullable, index=True))


class User(SQLModel, table=True):
    __tablename__ = "users"

    id: str = Field(primary_key=True, max_length=64)
    display_name: str
    created_at: datetime = _ts(nullable=False)
    lab_user: bool = Field(default=False, sa_column=Column(Boolean, nullable=False, server_default=text("false")))
    """Made by a person in the lab's user picker (or the demo user): only these are listed
    there. A turn run by an eval, a benchmark or a test creates its users unmarked."""


class Conversation(SQLModel, table=True):
    __tablename__ = "conversations"

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    user_id: str = _fk("users.id")
    backend: str = Field(index=True)
    started_at: datetime = _ts(nullable=False)
    last_activity_at: datetime = _ts(nullable=False)
    ended_at: Optional[datetime] = _ts()


class Message(SQLModel, table=True):
    """One message of one backend's conversation, replayed in `seq` order.

    `payload` keeps the exact JSON text sent to the model (a JSONB column would reorder
    keys), so the next turn's request starts with the same bytes and the prompt cache hits.
    System rows hold the injected memory notes.
    """

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq"),
        CheckConstraint("role IN ('user', 'assistant', 'system')", name="messages_role_check"),
    )

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    conversation_id: uuid.UUID = _fk("conversations.id")
    user_id: str = _fk("users.id")
    seq: int
    role: str
    payload: str = Field(sa_column=Column(Text, nullable=False))
    text: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = _ts(nullable=False)
    # Assistant rows: what the turn cost and what the backend did.
    model: Optional[str] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    cache_read_tokens: Optional[int] = None
    cache_write_tokens: Optional[int] = None
    recall_ms: Optional[float] = None
    ttft_ms: Optional[float] = None
    total_ms: Optional[float] = None
    details: Optional[dict[str, Any]] = Field(default=None, sa_column=Column(JSONB))


class Memory(SQLModel, table=True):
    """One version of one memory; versions of the same fact share a lineage."""

    __tablename__ = "memories"
    __table_args__ = (CheckConstraint("kind IN ('semantic', 'episodic', 'procedural')", name="memories_kind_check"),)

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    user_id: str = Field(sa_column=Column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False))
    lineage_id: uuid.UUID = Field(index=True)
    kind: str
    content: str = Field(sa_column=Column(Text, nullable=False))
    embedding: Any = Field(sa_column=Column(Vector(), nullable=False))
    topics: list[str] = Field(
        default_factory=list, sa_column=Column(ARRAY(Text), nullable=False, server_default=text("'{}'")),
        description="Retrieval topics (backends/custom/topics.py), set when the memory is stored",
    )
    topics_lexicon: str = Field(
        default="", sa_column=Column(Text, nullable=False, server_default=text("''")),
        description="The fingerprint of the lexicon and rules that set `topics`; another one means relabel",
    )
    importance: float = 0.5
    evidence: str = Field(sa_column=Column(Text, nullable=False))
    source_message_id: Optional[uuid.UUID] = Field(
        default=None, sa_column=Column(ForeignKey("messages.id", ondelete="SET NULL"), nullable=True)
    )
    source_ref: Optional[str] = Field(default=None, description="External provenance, e.g. a LoCoMo turn id")
    created_at: datetime = _ts(nullable=False)
    last_used_at: Optional[datetime] = _ts()
    expires_at: Optional[datetime] = _ts()
    superseded_at: Optional[datetime] = _ts()
    retracted_at: Optional[datetime] = _ts()


class MemoryJob(SQLModel, table=True):
    """Idempotency guard: written in the same transaction as the memory writes it guards."""

    __tablename__ = "memory_jobs"

    message_id: uuid.UUID = Field(primary_key=True)
    user_id: str = _fk("users.id")
    processed_at: datetime = _ts(nullable=False)


class Job(SQLModel, table=True):
    """The durable background queue (claimed with FOR UPDATE SKIP LOCKED)."""

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint("state IN ('queued', 'running', 'done', 'dead')", name="jobs_state_check"),
        Index("jobs_claimable", "run_after", postgresql_where=text("state IN ('queued', 'running')")),
    )

    id: Optional[int] = Field(default=None, sa_column=Column(BigInteger, Identity(), primary_key=True))
    kind: str = Field(index=True)
    user_id: Optional[str] = Field(default=None, sa_column=Column(ForeignKey("users.id", ondelete="CASCADE"), index=True))
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSONB, nullable=False))
    state: str = "queued"
    attempts: int = 0
    max_attempts: int = 5
    run_after: datetime = _ts(nullable=False)
    lease_until: Optional[datetime] = _ts()
    locked_by: Optional[str] = None
    last_error: Optional[str] = Field(default=None, sa_column=Column(Text))
    result: Optional[dict[str, Any]] = Field(default=None, sa_column=Column(JSONB))
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)
    finished_at: Optional[datetime] = _ts()


class MemoryFile(SQLModel, table=True):
    """A file of the memory-tool agent, under /memories, per user."""

    __tablename__ = "memory_files"
    __table_args__ = (UniqueConstraint("user_id", "path"),)

    id: uuid.UUID = Field(default_factory=uuid.uuid4, primary_key=True)
    user_id: str = _fk("users.id")
    path: str
    content: str = Field(default="", sa_column=Column(Text, nullable=False))
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)
    last_read_at: Optional[datetime] = _ts()


class ConversationSummary(SQLModel, table=True):
    """The rolling summary of the turns that fell out of a conversation's history budget."""

    __tablename__ = "conversation_summaries"

    conversation_id: uuid.UUID = Field(
        sa_column=Column(ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True)
    )
    user_id: str = _fk("users.id")
    content: str = Field(sa_column=Column(Text, nullable=False))
    covers_through_seq: int
    updated_at: datetime = _ts(nullable=False)


class EventLog(SQLModel, table=True):
    """User-visible events ("Noted: ...", sweeps, erasures): part of what erasure deletes."""

    __tablename__ = "event_log"

    id: Optional[int] = Field(default=None, sa_column=Column(BigInteger, Identity(), primary_key=True))
    user_id: Optional[str] = Field(default=None, sa_column=Column(ForeignKey("users.id", ondelete="CASCADE"), index=True))
    backend: Optional[str] = None
    kind: str
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = _ts(nullable=False)


class ErasedUser(SQLModel, table=True):
    """A tombstone: this user was erased, so a late write must not re-create them.

    Keyed by a keyed hash of the user id (see `db.tombstones`), never the id in clear: the
    tombstone outlives the user, and it must not itself be a list of who asked to be erased.
    """

    __tablename__ = "erased_users"

    key: str = Field(primary_key=True, max_length=64)
    erased_at: datetime = _ts(nullable=False)

"""Idempotent schema setup, run at every start: no hand-run SQL, ever.

Recall is an exact per-user scan (see DESIGN.md): a partial B-tree on live rows by user,
covering (id, half-precision embedding, expires_at, topics) when the vector fits a B-tree
entry so the scan is index-only, and deliberately NO HNSW index, because the planner would pick it and a
filtered HNSW scan silently returns too few rows.
"""

from __future__ import annotations

import threading

from sqlalchemy import Connection, Engine, text
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from settings import SettingsError

LIVE_MEMORY_PREDICATE = "superseded_at IS NULL AND retracted_at IS NULL"
"""Recall queries must repeat this predicate verbatim, or Postgres cannot use the index."""

MAX_COVERING_HALFVEC_DIM = 1200
"""B-tree entries are capped at 2,704 bytes: halfvec(d) takes 2*d+8 (plus the id, expiry
and topics beside it), so the covering index holds the half-precision copy up to ~1,200
dims (MiniLM's 384 fit; OpenAI's 1,536 fall back to the plain partial index)."""

RECALL_INDEX = "memories_live_by_user_half"
OLD_RECALL_INDEXES = ("memories_live_by_user",)
"""Earlier layouts' recall index (fp32 vectors in the index): dropped, or the planner may
keep choosing it and lose the half-precision index-only scan."""

GENERATED_USER_IDS = "|".join((
    r"^ev[0-9a-f]{8}-[0-9]{3}-",  # evals.run / evals.sweep: ev<run id>-<case index>-<backend>-<name>
    r"^lc[0-9a-f]{6}-",  # evals.locomo: lc<run id>-<conversation>-<backend>-<speaker>
    r"^(bench|measure)-",  # benchmarks/
    r"-[0-9a-f]{10,12}$",  # the tests' fixtures: <prefix>-<uuid hex>
))
"""The user ids that the project's own runners generated before users carried the
`lab_user` mark. Used once, to mark the users of a database from an earlier version: the
rest were made by a person and stay in the picker. Runs now use scratch storage (scratch.py)."""

_schema_lock = threading.Lock()


def embedding_dimension(engine: Engine) -> int | None:
    """The dimension of memories.embedding, or None when the column has no fixed one yet."""
    with engine.connect() as connection:
        typmod = connection.execute(
            text(
                "SELECT atttypmod FROM pg_attribute "
                "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
            )
        ).scalar_one_or_none()
    return None if typmod is None or typmod < 0 else int(typmod)


def _fix_dimension(engine: Engine, dimension: int) -> None:
    current = embedding_dimension(engine)
    if current is None:
        with engine.begin() as connection:
            connection.execute(text(f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({int(dimension)})"))
            current = dimension
    elif current != dimension:
        raise SettingsError(
            f"The embedder makes {dimension}-dim vectors but the database's memories.embedding is "
            f"vector({current}): set EMBEDDER back, or point DATABASE_URL at a fresh database."
        )
    with engine.begin() as connection:
        # A half-precision copy the database keeps in step by itself: recall ranks on it in the
        # covering index (half the bytes to read), then re-ranks its top candidates on the fp32
        # vectors, so the result stays exact (db/queries.py).
        connection.execute(text(
            f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding_half halfvec({int(dimension)}) "
            f"GENERATED ALWAYS AS (embedding::halfvec({int(dimension)})) STORED"
        ))


def _create_recall_index(engine: Engine, dimension: int) -> None:
    covering = "INCLUDE (id, embedding_half, expires_at, topics)" if dimension <= MAX_COVERING_HALFVEC_DIM else ""
    with engine.begin() as connection:
        connection.execute(
            text(
                f"CREATE INDEX IF NOT EXISTS {RECALL_INDEX} ON memories (user_id) {covering} "
                f"WHERE {LIVE_MEMORY_PREDICATE}"
            )
        )
        for old in OLD_RECALL_INDEXES:
            connection.execute(text(f"DROP INDEX IF EXISTS {old}"))
        # No second index on user_id: the planner would prefer a plain one (it is smaller)
        # and lose the index-only scan. Listing a user's old versions is not a hot path.
        # Procedural memories are injected every turn without a vector search: a tiny partial
        # index finds them (else a sequential scan); the recall query cannot use it (no kind).
        connection.execute(
            text(
                "CREATE INDEX IF NOT EXISTS memories_live_procedural ON memories (user_id) "
                f"WHERE kind = 'procedural' AND {LIVE_MEMORY_PREDICATE}"
            )
        )
        # Index-only scans need a current visibility map; this table is insert-heavy.
        connection.execute(
            text(
                "ALTER TABLE memories SET (autovacuum_vacuum_insert_scale_factor = 0.02, "
                "autovacuum_vacuum_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.05)"
            )
        )


ADDED_COLUMNS = (
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS topics text[] NOT NULL DEFAULT '{}'",
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS topics_lexicon text NOT NULL DEFAULT ''",
)
"""Columns added after a table first shipped: create_all never alters an existing table."""


def mark_lab_users(connection: Connection) -> None:
    """Add `users.lab_user` to a database from an earlier version, marking its users.

    `create_all` never adds a column to an existing table. A column added here starts NULL
    on every row, so the backfill runs once: a user whose id has the shape of a generated
    one is not a lab user, any other was made by a person. demo is always one.
    """
    nullable = connection.execute(text(
        "SELECT is_nullable FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = 'users' AND column_name = 'lab_user'"
    )).scalar_one_or_none()
    if nullable == "NO":  # a current database: nothing to do (and no table lock taken)
        return
    connection.execute(text("ALTER TABLE users ADD COLUMN IF NOT EXISTS lab_user boolean"))
    connection.execute(
        text("UPDATE users SET lab_user = (id = 'demo' OR id !~ :generated) WHERE lab_user IS NULL"),
        {"generated": GENERATED_USER_IDS},
    )
    connection.execute(text("ALTER TABLE users ALTER COLUMN lab_user SET DEFAULT false, "
                            "ALTER COLUMN lab_user SET NOT NULL"))


def ensure_schema(engine: Engine, dimension: int) -> None:
    """Create what is missing; refuse a database whose vectors differ from the embedder's."""
    with _schema_lock:
        with engine.begin() as connection:
            connection.execute(text("SELECT pg_advisory_xact_lock(7311001)"))  # one process creates at a time
            SQLModel.metadata.create_all(connection)
            for statement in ADDED_COLUMNS:
                connection.execute(text(statement))
            mark_lab_users(connection)
        _fix_dimension(engine, dimension)
        _create_recall_index(engine, dimension)

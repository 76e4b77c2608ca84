"""The index layout of Mem0's pgvector table: exact per-user search, or Mem0's stock HNSW.

Mem0's pgvector store runs `... WHERE payload->>'user_id' = X ORDER BY vector <=> q LIMIT n`.
With its stock HNSW index the planner walks the graph (ef_search = 40 candidates) and
filters by user AFTER the index scan, so a user who owns a small share of the table gets
too few rows back, often none (measured: DESIGN.md "Mem0 at scale", and
benchmarks/mem0_search.py). Without the HNSW index the same SQL is an exact scan of the
user's rows, and a B-tree on the expression `(payload->>'user_id')` finds those rows
without reading the table. Nothing in Mem0 changes: only which indexes exist.

The layout is applied when a backend starts; the `mem0_default_index` setting chooses it
for the whole deployment (every process must agree, since the indexes are shared).
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine, text

from settings import SettingsError

USER_INDEX_SUFFIX = "_user_id_idx"
HNSW_INDEX_SUFFIX = "_hnsw_idx"  # the name Mem0's create_col gives its HNSW index
LAYOUT_LOCK = 7311505
HNSW_BUILD_MEMORY = "512MB"
"""An HNSW build that does not fit maintenance_work_mem (64 MB by default) is many times
slower; 100k 384-d rows need about 200 MB."""


def entities_table(collection: str) -> str:
    """Mem0's entity-link collection (filled only when spaCy is installed)."""
    return f"{collection}_entities"


def _quote(engine: Engine, name: str) -> str:
    return engine.dialect.identifier_preparer.quote(name)


def _exists(connection: Connection, name: str) -> bool:
    return connection.execute(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": f'public."{name}"'}).scalar_one()


def table_exists(engine: Engine, name: str) -> bool:
    with engine.connect() as connection:
        return _exists(connection, name)


def vector_dimension(engine: Engine, table: str) -> int | None:
    with engine.connect() as connection:
        typmod = connection.execute(
            text("SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(:name) AND attname = 'vector'"),
            {"name": f'public."{table}"'},
        ).scalar_one_or_none()
    return None if typmod is None or typmod < 0 else int(typmod)


def check_dimension(engine: Engine, table: str, dimension: int) -> None:
    """Refuse to start when the table was made for another embedder (Mem0 would fail per call)."""
    found = vector_dimension(engine, table)
    if found is not None and found != dimension:
        raise SettingsError(
            f"The embedder makes {dimension}-dim vectors but Mem0's table {table} is vector({found}): "
            "set EMBEDDER back, or point DATABASE_URL at a fresh database."
        )


def _layout_statements(engine: Engine, table: str, default_index: bool) -> list[str]:
    quoted = _quote(engine, table)
    hnsw, by_user = _quote(engine, table + HNSW_INDEX_SUFFIX), _quote(engine, table + USER_INDEX_SUFFIX)
    if default_index:  # Mem0's stock layout, so its filtered-search shortfall is reproducible
        return [
            f"DROP INDEX IF EXISTS {by_user}",
            f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'",
            f"CREATE INDEX IF NOT EXISTS {hnsw} ON {quoted} USING hnsw (vector vector_cosine_ops)",
        ]
    return [
        f"DROP INDEX IF EXISTS {hnsw}",
        f"CREATE INDEX IF NOT EXISTS {by_user} ON {quoted} ((payload->>'user_id'))",
    ]


def ensure_layout(engine: Engine, collection: str, default_index: bool) -> None:
    """Give Mem0's tables (memories, and entities when present) the chosen indexes."""
    with engine.begin() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LAYOUT_LOCK})
        for table in (collection, entities_table(collection)):
            if _exists(connection, table):
                for statement in _layout_statements(engine, table, default_index):
                    connection.execute(text(statement))


def index_names(engine: Engine, table: str) -> list[str]:
    with engine.connect() as connection:
        return list(connection.execute(
            text("SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = :table ORDER BY 1"),
            {"table": table},
        ).scalars())

"""Ready for a distributed Postgres: `memories` hash-partitioned by user_id behaves like the table.

Citus distributes a table by one column and routes a query that pins it to one shard; the
embedded server's declarative hash partitioning is the same contract on one machine. The
test builds a 16-way partitioned copy of `memories` (same columns, same non-unique indexes
as `pg_indexes` reports them, so it follows the schema as it changes), copies some users'
rows into it, and runs every recall statement of `db/queries.py` (taken at test time, with
only the table name substituted) against both: the plan executes exactly one partition, and
the rows are identical. A second group of tests reads the metadata and the SQL a lab turn
sends: every per-user table has `user_id`, and every statement on one filters by it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from sqlalchemy import event, text
from sqlmodel import SQLModel

import db.queries
from backends.base import TurnContext
from backends.query_vector import with_query_vector
from backends.registry import backend_names, build_backend
from jobs.runner import drain
from pgvector import HalfVector

PARTITIONS = 16
COPY = "memories_by_user_test"
TABLE = re.compile(r"\bmemories\b")
USERS = 24


def recall_statements() -> dict[str, str]:
    """Every module-level SQL string in db/queries.py that reads `memories` (the recall SQL)."""
    found = {name: value for name, value in vars(db.queries).items()
             if isinstance(value, str) and name.isupper() and TABLE.search(value)
             and value.lstrip().upper().startswith(("SELECT", "WITH"))}
    assert found, "db/queries.py has no SELECT on memories: the test would check nothing"
    return found


def on_copy(sql: str) -> str:
    return TABLE.sub(COPY, sql)


def _index_definitions(connection) -> list[str]:
    """The table's non-unique indexes, re-targeted at the copy (unique ones need the
    partition key in them, which the id primary key has not: Citus has the same rule)."""
    rows = connection.execute(text(
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'memories'")).all()
    return [re.sub(r"INDEX (\S+) ON (public\.)?memories ", rf"INDEX {COPY}_{index} ON {COPY} ", row.indexdef)
            for index, row in enumerate(rows) if " UNIQUE " not in row.indexdef]


def _fill(connection, now: datetime) -> list[str]:
    """USERS users with 1-40 memories each (some superseded, retracted, expired, procedural)."""
    rng = np.random.default_rng(13)
    users = []
    for number in range(USERS):
        user_id = f"part-{uuid.uuid4().hex[:10]}"
        users.append(user_id)
        connection.execute(text("INSERT INTO users (id, display_name, created_at) VALUES (:u, :u, :now)"),
                           {"u": user_id, "now": now})
        for index in range(1 + number * 41 % 40):
            vector = rng.standard_normal(384).astype(np.float32)
            memory_id = uuid.uuid4()
            connection.execute(text(
                "INSERT INTO memories (id, user_id, lineage_id, kind, content, embedding, importance, evidence, created_at,"
                " expires_at, superseded_at, retracted_at) VALUES (:id, :u, :id, :kind, :content, :v, 0.5, 'e', :created,"
                " :expires, :superseded, :retracted)"), {
                "id": memory_id, "u": user_id, "kind": ("semantic", "episodic", "procedural")[index % 3],
                "content": f"row {index}", "v": vector / np.linalg.norm(vector),
                "created": now - timedelta(days=index), "expires": now - timedelta(days=1) if index % 11 == 5 else None,
                "superseded": now if index % 7 == 3 else None, "retracted": now if index % 13 == 4 else None})
    return users


@pytest.fixture(scope="module")
def partitioned(engine) -> Iterator[list[str]]:
    now = datetime.now(timezone.utc)
    with engine.begin() as connection:
        users = _fill(connection, now)
        connection.execute(text(f"DROP TABLE IF EXISTS {COPY}"))
        connection.execute(text(
            f"CREATE TABLE {COPY} (LIKE memories INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY HASH (user_id)"))
        for remainder in range(PARTITIONS):
            connection.execute(text(
                f"CREATE TABLE {COPY}_p{remainder} PARTITION OF {COPY} FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {remainder})"))
        for definition in _index_definitions(connection):
            connection.execute(text(definition))
        connection.execute(text(f"INSERT INTO {COPY} SELECT * FROM memories WHERE user_id = ANY(:users)"), {"users": users})
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(f"VACUUM ANALYZE {COPY}"))
    yield users
    with engine.begin() as connection:
        connection.execute(text(f"DROP TABLE IF EXISTS {COPY}"))
        connection.execute(text("DELETE FROM users WHERE id = ANY(:users)"), {"users": users})


KNOWN_PARAMETERS = {"user_id", "query", "query_half", "now", "limit", "k", "top_k", "candidates", "topics",
                    "topical_limit"}


def parameters(sql: str, user_id: str, vector: np.ndarray) -> dict[str, Any]:
    names = set(text(sql).compile().params)
    unknown = names - KNOWN_PARAMETERS
    assert not unknown, f"the recall SQL takes parameters this test does not know yet: {sorted(unknown)}"
    values = {"user_id": user_id, "query": vector, "query_half": HalfVector(vector), "now": datetime.now(timezone.utc),
              "limit": 30, "k": 30,
              "top_k": 30, "candidates": 30, "topics": ["travel", "food"], "topical_limit": 10}
    return {name: values[name] for name in names}


def executed_relations(plan: dict[str, Any]) -> set[str]:
    """Relations of the plan nodes that actually ran (pruned partitions never execute)."""
    found = set()
    if plan.get("Relation Name") and plan.get("Actual Loops", 0) > 0:
        found.add(plan["Relation Name"])
    for child in plan.get("Plans", []):
        found |= executed_relations(child)
    return found


def queries(seed: int = 5, count: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("name", sorted(recall_statements()))
def test_recall_on_the_partitioned_table_executes_one_partition(engine, partitioned, name):
    sql = on_copy(recall_statements()[name])
    with engine.connect() as connection:
        for user_id in partitioned[:8]:
            plan = connection.execute(text("EXPLAIN (ANALYZE, FORMAT JSON) " + sql),
                                      parameters(sql, user_id, queries()[0])).scalar_one()[0]["Plan"]
            touched = executed_relations(plan)
            assert len(touched) == 1 and next(iter(touched)).startswith(f"{COPY}_p"), (user_id, touched)


@pytest.mark.parametrize("name", sorted(recall_statements()))
def test_recall_on_the_partitioned_table_returns_the_same_rows(engine, partitioned, name):
    sql = recall_statements()[name]
    compared = 0
    with engine.connect() as connection:
        for user_id in partitioned:
            for vector in queries():
                values = parameters(sql, user_id, vector)
                # Same rows; in the same order when the statement orders them (a UNION need not).
                plain = [tuple(row) for row in connection.execute(text(sql), values)]
                split = [tuple(row) for row in connection.execute(text(on_copy(sql)), values)]
                if "ORDER BY" in sql.rsplit(")", 1)[-1]:
                    assert split == plain, user_id
                else:
                    assert sorted(split, key=repr) == sorted(plain, key=repr), user_id
                compared += len(plain)
    assert compared > 0  # some users have live rows: the comparison is not of empty lists


# -- every per-user table carries user_id, every per-user statement filters on it -----------
NOT_PER_USER = {"users", "erased_users"}
"""`users` is keyed by the user id itself (its `id`); `erased_users` (erasure's tombstones)
holds a keyed hash of an erased id, never the id, on purpose: a reference table on Citus."""


def per_user_tables() -> list[str]:
    return sorted(name for name in SQLModel.metadata.tables if name not in NOT_PER_USER)


def test_every_per_user_table_carries_user_id():
    missing = [name for name in per_user_tables() if "user_id" not in SQLModel.metadata.tables[name].columns]
    assert per_user_tables() and not missing, missing


QUEUE_TABLES = {"jobs"}
"""The job queue is claimed across users by design (FOR UPDATE SKIP LOCKED by state and
time); its rows carry user_id, but a claim does not filter by it. On Citus it stays a local
table on the coordinator (see the README), so claims are never cross-shard queries."""


def _tables_in(statement: str) -> set[str]:
    words = set(re.findall(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+\"?([a-z_]+)\"?", statement, flags=re.IGNORECASE))
    return {word.lower() for word in words}


def _pins_user(statement: str) -> bool:
    """An INSERT names user_id among its columns; anything else has user_id in its WHERE
    clause (a column list that merely returns user_id does not route a query to a shard)."""
    flat = " ".join(statement.split())
    if flat.upper().startswith("INSERT"):
        return "user_id" in flat.split(")")[0]
    _, where, condition = flat.partition(" WHERE ")
    return bool(where) and "user_id" in condition


def test_every_statement_a_lab_turn_sends_to_a_per_user_table_filters_on_user_id(runtime, make_user):
    backends = {name: build_backend(name, runtime) for name in backend_names()}
    user = make_user("shard")
    statements: list[str] = []

    def capture(_conn, _cursor, statement, _parameters, _context, _executemany) -> None:
        statements.append(statement)

    event.listen(runtime.engine, "before_cursor_execute", capture)
    try:
        for message in ("I am learning Welsh and I live in Cardiff.", "What should I read next?",
                        "Actually I moved to Swansea.", "Forget that I am learning Welsh."):
            for backend in backends.values():
                backend.turn(with_query_vector(TurnContext(user_id=user, text=message), runtime.embedder))
            drain(runtime, user_id=user)
    finally:
        event.remove(runtime.engine, "before_cursor_execute", capture)
    per_user = set(per_user_tables()) - QUEUE_TABLES
    checked = [s for s in statements if _tables_in(s) & per_user]
    unfiltered = sorted({" ".join(s.split())[:240] for s in checked if not _pins_user(s)})
    assert len(checked) > 20 and not unfiltered, "\n".join(unfiltered)

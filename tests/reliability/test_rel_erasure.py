"""Erasure leaves no readable copy: a canary through every backend, erased, then searched in
every table, `pg_stats`, Mem0's SQLite files, the logs, and the raw bytes of every relation
file of the database (after a CHECKPOINT, so what is in shared buffers is on disk).

Before the fix, ANALYZE put the canary into pg_stats (8 columns) and dead rows kept it in
7 table files; the erasure now rewrites the touched tables and rebuilds their statistics.
"""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import text

from backends.erasure import erase_user_everywhere
from backends.registry import build_backend
from jobs.runner import drain
from runtime import Runtime
from tests.reliability.faults_support import Figure, new_user, turn

pytestmark = pytest.mark.reliability

BACKENDS = ("custom", "mem0", "memory_tool")


def table_hits(runtime: Runtime, needle: str) -> list[str]:
    """Every public table (any column, as text) with a row containing the needle."""
    with runtime.engine.connect() as connection:
        tables = connection.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).scalars().all()
        return [name for name in tables if connection.execute(
            text(f'SELECT count(*) FROM public."{name}" AS t WHERE t::text LIKE :like'), {"like": f"%{needle}%"}).scalar_one()]


def stats_hits(runtime: Runtime, needle: str) -> list[str]:
    """pg_stats columns whose statistics (common values, histogram, elements) contain the needle."""
    sql = text("SELECT schemaname || '.' || tablename || '.' || attname FROM pg_stats "
               "WHERE coalesce(most_common_vals::text, '') || coalesce(histogram_bounds::text, '') "
               "|| coalesce(most_common_elems::text, '') LIKE :like")
    with runtime.engine.connect() as connection:
        return list(connection.execute(sql, {"like": f"%{needle}%"}).scalars())


def relation_files(runtime: Runtime, pgdata: Path) -> dict[str, list[Path]]:
    """relation -> its files (all segments, free-space and visibility maps) in this database."""
    with runtime.engine.connect() as connection:
        connection.execute(text("CHECKPOINT"))
        rows = connection.execute(text(
            "SELECT oid::regclass::text, pg_relation_filepath(oid) FROM pg_class WHERE pg_relation_filepath(oid) IS NOT NULL"
        )).all()
    files: dict[str, list[Path]] = {}
    for name, relative in rows:
        base = pgdata / relative
        files[name] = [path for path in base.parent.glob(base.name + "*")
                       if path.name == base.name or path.name[len(base.name)] in "._"]
    return files


def file_hits(files: dict[str, list[Path]], needle: str) -> list[str]:
    raw = needle.encode()
    return [name for name, paths in files.items() if any(raw in path.read_bytes() for path in paths if path.exists())]


def sqlite_hits(directory: Path, needle: str) -> list[str]:
    """Mem0's SQLite files: every table's rows, and the raw bytes of the file, journal and WAL."""
    hits = [str(path) for path in directory.rglob("*") if path.is_file() and needle.encode() in path.read_bytes()]
    for path in directory.rglob("*.db"):
        with closing(sqlite3.connect(str(path))) as connection:
            for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                if any(needle in str(value) for row in connection.execute(f'SELECT * FROM "{table}"') for value in row):
                    hits.append(f"{path.name}:{table}")
    return hits


def log_hits(data_dir: Path, needle: str) -> list[str]:
    logs = [path for path in data_dir.rglob("*") if path.is_file()
            and (path.suffix == ".log" or path.name == "log" or path.parent.name in ("log", "logs"))]
    assert logs, "the server log exists: the check is not vacuous"
    return [str(path) for path in logs if needle.encode() in path.read_bytes()]


def test_canary_in_no_table_stats_file_or_log_after_erasure(runtime: Runtime, data_dir: Path):
    canary = f"quokka{uuid.uuid4().hex[:10]}"
    user, keeper = new_user(runtime, "rel-erase"), new_user(runtime, "rel-keep")
    backends = [build_backend(name, runtime) for name in BACKENDS]
    for backend in backends:
        # Not "my code word": a code word is a secret now, and secrets are never stored.
        turn(backend, user, f"Remember that my favourite bird is the {canary}.")
        turn(backend, keeper, "Remember that my favourite fruit is mango.")
        drain(runtime, max_seconds=60)
        turn(backend, user, "What is my favourite bird?")  # recalled: the canary lands in an injected row too
    drain(runtime, max_seconds=60)
    with runtime.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("ANALYZE"))  # what autovacuum does by itself
    pgdata = data_dir / "pgdata"
    before = {"tables": table_hits(runtime, canary), "stats": stats_hits(runtime, canary),
              "files": file_hits(relation_files(runtime, pgdata), canary)}
    print(f"\nbefore erasure the canary is in: {before}")
    assert {"messages", "memories", "memory_files", "mem0_memories"} <= set(before["tables"]), before
    assert before["stats"] and before["files"], before  # the checks below can fail

    reports = erase_user_everywhere(runtime, user)

    figure = Figure("erasure leaves no readable copy")
    files = relation_files(runtime, pgdata)
    for needle, what in ((canary, "canary"), (user, "user id")):
        figure.check(f"{what} in no table", not table_hits(runtime, needle), table_hits(runtime, needle))
        figure.check(f"{what} in no pg_stats row", not stats_hits(runtime, needle), stats_hits(runtime, needle))
        figure.check(f"{what} in no relation file ({len(files)} relations read)", not file_hits(files, needle),
                     file_hits(files, needle))
        figure.check(f"{what} in no Mem0 SQLite file", not sqlite_hits(data_dir / "mem0", needle),
                     sqlite_hits(data_dir / "mem0", needle))
        figure.check(f"{what} in no log", not log_hits(data_dir, needle), log_hits(data_dir, needle))
    for backend in backends:
        figure.check(f"{backend.name} keeps nothing", backend.all_texts(user) == [], backend.all_texts(user))
        figure.check(f"{backend.name} keeps the other user's data", any("mango" in t.lower() for t in backend.all_texts(keeper)),
                     backend.all_texts(keeper))
    shared = next(report for report in reports if report.backend == "shared")
    figure.check("every touched table compacted", shared.deleted["compaction_failures"] == 0
                 and shared.deleted["compacted_tables"] >= 10 and shared.deleted["statistics_compacted"] == 1, shared.deleted)
    figure.check("the report says what the WAL and backups keep",
                 any("write-ahead log" in note for note in shared.notes) and any("backup" in note for note in shared.notes),
                 shared.notes)
    figure.report()

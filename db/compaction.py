"""After an erasure: rewrite the touched tables and rebuild their statistics, so the deleted
text is in no table file and no `pg_stats` row.

Why: DELETE only marks rows dead. Until a VACUUM reuses the space, the text stays in the
table's files (readable with a hex dump after a CHECKPOINT), and ANALYZE (autovacuum runs
it by itself) copies column values into `pg_statistic` (most common values, histograms),
readable by anyone through `pg_stats`. Plain VACUUM leaves much of it (pages it does not
rewrite); VACUUM FULL writes a fresh copy of the table and its indexes and TOAST, then drops
the old files. ANALYZE then rebuilds the statistics from the live rows, and a VACUUM FULL of
`pg_statistic` removes the dead versions of the old statistics rows.

Cost: VACUUM FULL locks each table (ACCESS EXCLUSIVE) while it rewrites it, and cannot run
in a transaction; for a lab database that is seconds. What stays: the WAL (see README).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy import Engine, text

log = logging.getLogger(__name__)

CATALOG_STATISTICS = "pg_catalog.pg_statistic"


def existing_tables(engine: Engine, names: Sequence[str]) -> list[str]:
    """The given public tables that exist (a backend's tables may not have been created yet)."""
    with engine.connect() as connection:
        return [name for name in names
                if connection.execute(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": f'public."{name}"'}).scalar_one()]


def compact(engine: Engine, tables: Sequence[str]) -> dict[str, int]:
    """VACUUM FULL + ANALYZE each table, then VACUUM FULL pg_statistic; returns counts.

    Failures are counted, not raised (the rows are already deleted; a table left
    uncompacted is reported, and the next erasure or autovacuum compacts it)."""
    counts = {"compacted_tables": 0, "compaction_failures": 0, "statistics_compacted": 0}
    quote = engine.dialect.identifier_preparer.quote
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        for name in existing_tables(engine, tables):
            try:
                connection.execute(text(f"VACUUM (FULL, ANALYZE) public.{quote(name)}"))
                counts["compacted_tables"] += 1
            except Exception as error:  # noqa: BLE001 - counted; the type only (no user text in logs)
                counts["compaction_failures"] += 1
                log.warning("erasure: VACUUM FULL of %s failed (%s)", name, type(error).__name__)
        # Only a superuser may rewrite a catalog (others get a warning and nothing is done): the
        # embedded server's role is one; an external DATABASE_URL role may not be (see the notes).
        if connection.execute(text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).scalar():
            try:
                connection.execute(text(f"VACUUM FULL {CATALOG_STATISTICS}"))
                counts["statistics_compacted"] = 1
            except Exception as error:  # noqa: BLE001 - reported in the erasure's notes
                log.warning("erasure: VACUUM FULL of pg_statistic failed (%s)", type(error).__name__)
    return counts

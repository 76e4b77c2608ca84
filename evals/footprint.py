"""Every text the database keeps about one user, found generically.

An erasure check that only asks the backend (`all_texts`) trusts the code under test;
this module also reads every table of the database that has a `user_id` column, found by
reflection rather than a hand-kept list, so a table added later (a log, a cache) is
covered without anyone remembering to add it here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from sqlalchemy import Engine, MetaData, select
from sqlalchemy.types import NullType

USER_COLUMN = "user_id"


def _text_of(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return None  # numbers, timestamps, ids, vectors: not where a user's words end up


def _searchable_columns(table) -> list:
    # Reflected pgvector columns come back as NullType (or pgvector's Vector when its
    # SQLAlchemy type is registered): their values are numbers, never the user's text.
    return [column for column in table.c if not isinstance(column.type, NullType) and "VECTOR" not in str(column.type).upper()]


def user_rows_texts(engine: Engine, user_id: str) -> Iterator[tuple[str, str]]:
    """(table name, text) for each text value of each row whose user_id is this user."""
    metadata = MetaData()
    metadata.reflect(engine)
    with engine.connect() as connection:
        for table in metadata.sorted_tables:
            if USER_COLUMN not in table.c:
                continue
            statement = select(*_searchable_columns(table)).where(table.c[USER_COLUMN] == user_id)
            for row in connection.execute(statement):
                for value in row:
                    text = _text_of(value)
                    if text:
                        yield table.name, text

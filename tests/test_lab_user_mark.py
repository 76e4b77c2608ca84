"""A database from before users carried the `lab_user` mark: the schema step marks the
users a person made and leaves the ones the project's runners generated unmarked."""

from __future__ import annotations

import uuid

from sqlalchemy import text

from db.schema import mark_lab_users

LEGACY_USERS = {
    "demo": True,
    "alice": True,
    "team.notes_2": True,
    "evf3d28be6-000-mem0-u1": False,  # evals.run
    "lc9f8e7d-30-memorytool-melanie": False,  # evals.locomo
    "bench-warm-1a2b3c": False,  # benchmarks
    "measure-turn-aa11bb": False,
    "u-0123456789ab": False,  # test fixtures
    "victim-0123456789": False,
}


def test_users_of_an_earlier_version_are_marked_by_who_made_them(engine):
    schema = f"legacy_{uuid.uuid4().hex[:8]}"
    with engine.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
        connection.execute(text(f"SET LOCAL search_path TO {schema}"))
        connection.execute(text("CREATE TABLE users (id varchar(64) PRIMARY KEY, display_name varchar NOT NULL, "
                                "created_at timestamptz NOT NULL)"))
        for user in LEGACY_USERS:
            connection.execute(text("INSERT INTO users VALUES (:id, :id, now())"), {"id": user})
        mark_lab_users(connection)
        marked = dict(connection.execute(text("SELECT id, lab_user FROM users")).all())
        mark_lab_users(connection)  # a second start changes nothing
        again = dict(connection.execute(text("SELECT id, lab_user FROM users")).all())
        connection.execute(text("INSERT INTO users (id, display_name, created_at) VALUES ('old-code', 'x', now())"))
        default = connection.execute(text("SELECT lab_user FROM users WHERE id = 'old-code'")).scalar_one()
        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    assert marked == LEGACY_USERS == again
    assert default is False  # a row written by older code is not listed

"""Forgetting on the real stack: the forget tool, TTL and the sweep, incognito, and
"delete all my data" checked against every text column of every table and the logs."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine, select, text, update
from sqlmodel import Session

from backends.base import Knobs, TurnContext
from backends.custom import forgetting
from backends.custom.backend import CustomPipelineBackend
from backends.erasure import erase_user_everywhere
from db.models import EventLog, Memory, Message, User
from tests.custom.conftest import chat, jobs_of, live_rows, memory_rows

CANARY = "pineapple-42"


def _tables_containing(engine: Engine, needle: str) -> dict[str, int]:
    """Rows holding `needle` in ANY text-like column (text, varchar, json, jsonb) of ANY table."""
    with engine.connect() as connection:
        columns = connection.execute(text(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
            "AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'character')"
        )).all()
        hits = {}
        for schema, table, column in columns:
            count = connection.execute(
                text(f'SELECT count(*) FROM "{schema}"."{table}" WHERE "{column}"::text LIKE :pattern'),
                {"pattern": f"%{needle}%"},
            ).scalar_one()
            if count:
                hits[f"{schema}.{table}.{column}"] = count
    return hits


def _log_files(data_dir: Path) -> list[Path]:
    """Log files under the data dir: *.log, the embedded server's `pgdata/log`, anything in a log(s) folder."""
    return [path for path in data_dir.rglob("*") if path.is_file()
            and (path.suffix == ".log" or path.name == "log" or path.parent.name in ("log", "logs"))]


def test_canary_is_gone_from_every_table_and_log_after_erasure(backend: CustomPipelineBackend, user_id: str,
                                                               data_dir: Path) -> None:
    runtime = backend.runtime
    chat(backend, user_id, f"My code word is {CANARY}")
    chat(backend, user_id, "I'm vegetarian")
    chat(backend, user_id, "What's my code word again?")  # recalls it: the canary lands in an injected system row
    before = _tables_containing(runtime.engine, CANARY)
    assert {"public.messages.text", "public.messages.payload", "public.memories.content", "public.memories.evidence",
            "public.event_log.detail"} <= set(before), before
    with Session(runtime.engine) as session:
        system_rows = session.scalars(select(Message).where(Message.user_id == user_id, Message.role == "system")).all()
    assert any(CANARY in row.text for row in system_rows)
    with Session(runtime.engine) as session:
        message_count = len(session.scalars(select(Message.id).where(Message.user_id == user_id)).all())

    reports = erase_user_everywhere(runtime, user_id)

    assert _tables_containing(runtime.engine, CANARY) == {}
    logs = _log_files(data_dir)
    assert any(path.name == "log" for path in logs), logs  # the server log exists: the check is not vacuous
    assert [str(path) for path in logs if CANARY.encode() in path.read_bytes()] == []
    by_backend = {report.backend: report for report in reports}
    custom = by_backend["custom"].deleted
    assert custom["memories"] == 2 and custom["messages"] == message_count >= 7 and custom["jobs"] == 3 and custom["memory_jobs"] == 3
    assert custom["events"] == 2  # two "noted" events
    assert by_backend["shared"].deleted["users"] == 1
    assert all(value == 0 for key, value in by_backend["shared"].deleted.items() if key.startswith("leftover_"))
    with Session(runtime.engine) as session:
        assert session.get(User, user_id) is None
    assert backend.all_texts(user_id) == []


def test_ttl_stops_recall_and_the_sweep_removes_it(iso_backend: CustomPipelineBackend, user_id: str) -> None:
    runtime, clock = iso_backend.runtime, iso_backend.runtime.clock
    chat(iso_backend, user_id, "I'm in Goa this week")
    chat(iso_backend, user_id, "I'm vegetarian")
    [goa] = [row for row in live_rows(runtime, user_id) if "Goa" in row.content]
    assert goa.kind == "episodic" and goa.expires_at is not None
    ttl_days = (goa.expires_at - goa.created_at).days
    assert 1 <= ttl_days <= 7

    question = "Any tips for my time in Goa?"
    context = TurnContext(user_id=user_id, text=question, knobs=Knobs.from_settings(runtime.settings))
    assert [n.content for n in iso_backend.prepare_turn(context).injected] == [goa.content]

    clock.advance(days=ttl_days, seconds=60)
    recall = iso_backend.prepare_turn(context)
    assert goa.content not in [n.content for n in recall.notes], "an expired memory is not even a candidate"
    statuses = {record.content: record.status for record in iso_backend.list_memories(user_id, include_inactive=True)}
    assert statuses[goa.content] == "expired" and goa.content not in iso_backend.stored_texts(user_id)

    assert forgetting.sweep(runtime.engine, clock.now(), user_id)["expired"] == 0, "kept for a week after expiry"
    clock.advance(days=8)
    counts = iso_backend.sweep()
    assert counts["expired"] >= 1
    assert [row.content for row in memory_rows(runtime, user_id)] == ["User is vegetarian."]


def test_sweep_reasons(iso_backend: CustomPipelineBackend, user_id: str) -> None:
    runtime, clock = iso_backend.runtime, iso_backend.runtime.clock
    chat(iso_backend, user_id, "I live in Bangalore")
    chat(iso_backend, user_id, "We moved to Pune")
    chat(iso_backend, user_id, "I have a dentist appointment on Tuesday")
    with Session(runtime.engine) as session:  # make the episodic one low-importance and without expiry
        session.execute(update(Memory).where(Memory.user_id == user_id, Memory.kind == "episodic")
                        .values(importance=0.2, expires_at=None))
        session.commit()
    clock.advance(days=91)
    assert forgetting.sweep(runtime.engine, clock.now(), user_id) == {"expired": 0, "stale_episodic": 0, "superseded": 1, "retracted": 0}
    clock.advance(days=90)
    assert forgetting.sweep(runtime.engine, clock.now(), user_id) == {"expired": 0, "stale_episodic": 1, "superseded": 0, "retracted": 0}
    assert [row.content for row in memory_rows(runtime, user_id)] == ["User lives in Pune."]


def test_forget_tool_deletes_every_version_of_the_matched_lineage(backend: CustomPipelineBackend, user_id: str,
                                                                  make_user) -> None:
    runtime = backend.runtime
    other = make_user()
    chat(backend, other, "I live in Pune")
    chat(backend, user_id, "I live in Bangalore")
    chat(backend, user_id, "We moved to Pune")
    chat(backend, user_id, "I'm vegetarian")
    assert len(memory_rows(runtime, user_id)) == 3

    result = chat(backend, user_id, "Please forget where I live.")
    assert [call.name for call in result.tool_calls] == ["forget"]
    output = json.loads(result.tool_calls[0].result)
    assert output == {"deleted_count": 2, "deleted_notes": ["User lives in Pune."]}
    assert [row.content for row in memory_rows(runtime, user_id)] == ["User is vegetarian."]
    assert [row.content for row in memory_rows(runtime, other)] == ["User lives in Pune."], "only this user's memories"
    with Session(runtime.engine) as session:
        events = session.scalars(select(EventLog.kind).where(EventLog.user_id == user_id)).all()
    assert "forgot" in events


def test_incognito_turns_write_no_memory(backend: CustomPipelineBackend, user_id: str) -> None:
    runtime = backend.runtime
    chat(backend, user_id, "I'm vegetarian")
    result = chat(backend, user_id, "I live in Bangalore", incognito=True)
    assert result.jobs == [] and result.recall.skipped_reason == "incognito"
    chat(backend, user_id, "Thanks!")
    assert [row.content for row in memory_rows(runtime, user_id)] == ["User is vegetarian."]
    assert len(jobs_of(runtime, user_id)) == 2


def test_incognito_turns_are_left_out_of_session_extraction(make_user, runtime) -> None:
    from runtime import Runtime
    from settings import load_settings

    session_runtime = Runtime(settings=load_settings(extract_when="session"), engine=runtime.engine, embedder=runtime.embedder,
                              clock=runtime.clock)
    backend = CustomPipelineBackend(session_runtime)
    user_id = make_user()
    chat(backend, user_id, "I'm vegetarian")
    chat(backend, user_id, "I live in Bangalore", incognito=True)
    backend.new_conversation(user_id)
    from jobs.runner import drain

    drain(session_runtime, user_id=user_id)
    assert [row.content for row in memory_rows(session_runtime, user_id)] == ["User is vegetarian."]


def test_forget_with_no_matching_memory_deletes_nothing(backend: CustomPipelineBackend, user_id: str) -> None:
    chat(backend, user_id, "I'm vegetarian")
    chat(backend, user_id, "I live in Pune")
    assert backend.forget(user_id, "my favourite band") == []
    assert len(memory_rows(backend.runtime, user_id)) == 2

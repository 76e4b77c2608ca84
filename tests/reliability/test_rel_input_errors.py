"""Raw errors never reach the screen: real failures (a value Postgres refuses, a foreign-key
race, a database that is down, a hostile user name) become one short plain sentence in the
column, and the log keeps the full error without the user's text (issue #15, item 6)."""

from __future__ import annotations

import logging
import uuid

import psycopg
import pytest
from sqlalchemy import create_engine, text

from backends.base import ErasureReport, MemoryBackend, MemoryRecord, Recall, TurnContext, TurnResult
from backends.registry import build_backend
from chat.errors import MAX_SHOWN_CHARS, plain_error
from core.user_ids import normalise_user_id
from runtime import Runtime
from ui.parallel import run_parallel

CANARY = "Xylophone-Quokka-7713"
RAW_MARKS = ("[SQL", "[parameters", "SELECT ", "INSERT ", "psycopg", "sqlalchemy", ".s.PGSQL", "/tmp/", "Traceback", CANARY)


class RaisingBackend(MemoryBackend):
    """A backend whose turn hits a real database error carrying the user's text."""

    name = "raising"
    label = "Raising"

    def __init__(self, make_error) -> None:
        self.make_error = make_error

    def prepare_turn(self, context: TurnContext) -> Recall:
        self.make_error(context.text)
        return Recall()

    def run_turn(self, context: TurnContext, recall: Recall, on_text=None) -> TurnResult:
        raise AssertionError("never reached")

    def new_conversation(self, user_id: str) -> None:
        return None

    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        return []

    def erase_user(self, user_id: str) -> ErasureReport:
        return ErasureReport(backend=self.name, user_id=user_id)


def _data_error(engine):
    def make(user_text: str) -> None:
        with engine.connect() as connection:  # Postgres text cannot hold NUL: a DataError with the text as parameter
            connection.execute(text("SELECT CAST(:value AS text)"), {"value": user_text + "\x00"})
    return make


def _integrity_error(engine):
    def make(user_text: str) -> None:
        with engine.begin() as connection:  # a message for a conversation that is gone (an erasure raced the turn)
            connection.execute(text(
                "INSERT INTO messages (id, conversation_id, user_id, seq, role, payload, text, created_at) "
                "VALUES (:id, :conversation, :user, 0, 'user', '{}', :text, now())"),
                {"id": uuid.uuid4(), "conversation": uuid.uuid4(), "user": "nobody", "text": user_text})
    return make


DEAD_SOCKET_DIR = "/tmp/memory-lab-no-such-server"


def _database_down(_engine):
    dead = create_engine(f"postgresql+psycopg://lab@/lab?host={DEAD_SOCKET_DIR}&connect_timeout=2")

    def make(user_text: str) -> None:
        with dead.connect() as connection:
            connection.execute(text("SELECT :v"), {"v": user_text})
    return make


def _driver_down(_engine):
    def make(user_text: str) -> None:  # psycopg directly, as Mem0's pool meets it
        psycopg.connect(f"host={DEAD_SOCKET_DIR} dbname=lab user=lab connect_timeout=2")
    return make


FAILURES = {"value Postgres refuses": _data_error, "foreign-key race": _integrity_error,
            "database down": _database_down, "driver connection refused": _driver_down}


def _raw(shown: str) -> list[str]:
    return [mark for mark in RAW_MARKS if mark.lower() in shown.lower()]


def test_a_database_failure_is_one_plain_sentence_and_the_log_has_no_user_text(
        runtime: Runtime, user_id, caplog, record_figure) -> None:
    message = f"My secret project is called {CANARY}, remember it " + "and more " * 300
    problems: list[str] = []
    for failure, make_error in FAILURES.items():
        backends = {"raising": RaisingBackend(make_error(runtime.engine)), "none": build_backend("none", runtime)}
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="lab.errors"):
            results = run_parallel(backends, TurnContext(user_id=user_id, text=message))
        shown = results["raising"].error or ""
        issues = [f"shows {mark!r}" for mark in _raw(shown)]
        if not shown or len(shown) > MAX_SHOWN_CHARS:
            issues.append(f"{len(shown)} characters shown")
        if results["none"].error is not None:
            issues.append("the other column failed too")
        logged = "\n".join(record.getMessage() for record in caplog.records)
        if "failed" not in logged:
            issues.append("nothing logged")
        if CANARY in logged:
            issues.append("the log holds the user's text")
        if issues:
            problems.append(f"{failure}: {', '.join(issues)}: {shown[:80]!r}")
    record_figure("errors: database failures shown as one plain sentence, log without user text", len(FAILURES),
                  problems)


def test_the_log_keeps_the_statement(runtime: Runtime, user_id, caplog) -> None:
    """The log is for the operator: which statement failed, without its parameters."""
    backends = {"raising": RaisingBackend(_data_error(runtime.engine))}
    with caplog.at_level(logging.ERROR, logger="lab.errors"):
        run_parallel(backends, TurnContext(user_id=user_id, text=f"about {CANARY}"))
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "SELECT CAST" in logged and "DataError" in logged and CANARY not in logged


def test_a_rejected_user_name_is_echoed_short(record_figure) -> None:
    names = ["x" * 10_000, "<script>" * 1_500, "../" * 4_000, "a b " * 3_000, "\x00" * 500, "é" * 65]
    problems = []
    for raw in names:
        with pytest.raises(ValueError) as refused:
            normalise_user_id(raw)
        shown = plain_error(refused.value)
        if len(shown) > MAX_SHOWN_CHARS:
            problems.append(f"{len(raw):,}-character name: {len(shown)} characters echoed")
    record_figure("errors: rejected user names echoed short", len(names), problems)


def test_an_unknown_error_is_capped_and_loses_paths() -> None:
    shown = plain_error(RuntimeError("boom at /var/lib/lab/data/pg/.s.PGSQL.5432 " + "y" * 5_000))
    assert len(shown) <= MAX_SHOWN_CHARS and "/var/lib" not in shown and shown.startswith("This backend failed: RuntimeError")

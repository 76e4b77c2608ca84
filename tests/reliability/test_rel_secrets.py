"""Secrets typed in chat reach no store: card numbers, IBANs, API keys, AWS keys, passwords
and door/alarm/PIN codes go through every backend, its background jobs run, and then every
table (except the verbatim chat transcript, see SECURITY.md), Mem0's history file, every
file in the data directory outside Postgres, and the log are searched for each value
(issue #15, item 4). A plain fact sent the same way is stored, so the search can find things.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import text

from backends.mem0_backend.config import history_db_path
from backends.registry import backend_names, build_backend
from core.secrets import REDACTED, iban_valid, luhn_valid, redact, secret_reason
from core.turn import TurnContext
from jobs.runner import drain

TRANSCRIPT_TABLES = {"messages"}
"""The conversation as typed: the chat history the next turn replays (SECURITY.md says so)."""
LOGGERS = ("jobs", "lab", "db", "chat", "backends", "mem0", "apscheduler")


def _luhn_complete(prefix: str) -> str:
    return next(prefix + str(d) for d in range(10) if luhn_valid(prefix + str(d)))


def _iban(country: str, bban: str) -> str:
    digits = "".join(str(int(char, 36)) for char in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


CARD = _luhn_complete("491761370958412")
IBAN = _iban("DE", "370502991234567890")
ANT_KEY = "sk-ant-api03-" + uuid.uuid5(uuid.NAMESPACE_DNS, "rel-ant").hex + "Qx9Lm2"
STRIPE_KEY = "sk_live_" + uuid.uuid5(uuid.NAMESPACE_DNS, "rel-stripe").hex[:24]
GITHUB_TOKEN = "ghp_" + uuid.uuid5(uuid.NAMESPACE_DNS, "rel-gh").hex + "AbCd"
AWS_KEY_ID = "AKIA" + uuid.uuid5(uuid.NAMESPACE_DNS, "rel-aws").hex[:16].upper()
AWS_SECRET = "q8Zr/" + uuid.uuid5(uuid.NAMESPACE_DNS, "rel-aws-s").hex[:27] + "+Tb7Wx1E"

# (message, the secret values it holds, in every spelling that must not appear anywhere)
SECRET_MESSAGES = [
    (f"Please charge my card {' '.join(CARD[i:i + 4] for i in range(0, 16, 4))} for the order.", [CARD]),
    (f"my card number is {'-'.join(CARD[i:i + 4] for i in range(0, 16, 4))}", [CARD]),
    (f"Send the refund to my IBAN {' '.join(IBAN[i:i + 4] for i in range(0, len(IBAN), 4))} please.", [IBAN]),
    (f"my iban is {IBAN.lower()} in case you need it", [IBAN]),
    (f"Here is my Anthropic API key: {ANT_KEY}", [ANT_KEY]),
    (f"The shop uses the key {STRIPE_KEY} for payments.", [STRIPE_KEY]),
    (f"I saved {GITHUB_TOKEN} as my github thing", [GITHUB_TOKEN]),
    (f"For the backups: {AWS_KEY_ID} with {AWS_SECRET}", [AWS_KEY_ID, AWS_SECRET]),
    ("My email password is Marmalade!Sky42 by the way.", ["Marmalade!Sky42"]),
    ("The wifi password at home: bluemoonriver", ["bluemoonriver"]),
    ("What is my laptop password? It is quietharbor. I always forget.", ["quietharbor"]),
    ("The code for my front door is 4417.", ["4417"]),
    ("My alarm code is 2580 and I set it every night.", ["2580"]),
    ("My PIN is 7391, don't tell anyone.", ["7391"]),
    ("The gate code at the lake house is 66120.", ["66120"]),
]
CONTROL = "I keep three beehives in my garden."
CONTROL_WORD = "beehive"


def _spellings(value: str) -> list[str]:
    compact = re.sub(r"[\s-]", "", value)
    spellings = {value, compact, compact.lower()}
    if compact.isalnum() and len(compact) >= 12:
        for size in (4,):
            spellings.add(" ".join(compact[i:i + size] for i in range(0, len(compact), size)))
            spellings.add("-".join(compact[i:i + size] for i in range(0, len(compact), size)))
    return sorted(spellings)


def _pattern(value: str) -> re.Pattern[str]:
    return re.compile("|".join(rf"(?<![0-9A-Za-z]){re.escape(s)}(?![0-9A-Za-z])" for s in _spellings(value)), re.I)


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
"""Row ids are not user text: a short code like 4417 is a group of one in 4,096 random uuids.
No word boundaries: in a SQLite file's raw bytes a uuid often follows a record-header byte."""


def _postgres_texts(engine) -> dict[str, str]:
    with engine.connect() as connection:
        tables = connection.execute(text(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")).scalars().all()
        return {table: "\n".join(connection.execute(text(f'SELECT t::text FROM "{table}" t')).scalars())
                for table in tables if table not in TRANSCRIPT_TABLES}


def _history_texts(path: str | Path) -> dict[str, str]:
    path = Path(path)
    if not path.exists():
        return {}
    with closing(sqlite3.connect(str(path))) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {f"history.db:{table}": "\n".join(repr(row) for row in connection.execute(f'SELECT * FROM "{table}"'))
                for table in tables}


def _data_files(data_dir: Path) -> dict[str, str]:
    """Raw bytes of every file outside Postgres' own directory (Mem0's files, logs)."""
    found = {}
    for path in data_dir.rglob("*"):
        if path.is_file() and "pgdata" not in path.relative_to(data_dir).parts:
            found[f"file:{path.relative_to(data_dir)}"] = path.read_bytes().decode("utf-8", "replace")
    return found


def test_secrets_are_in_no_store_job_or_log(runtime, data_dir, make_user, caplog, record_figure) -> None:
    for name in LOGGERS:
        caplog.set_level(logging.INFO, logger=name)
    backends = {name: build_backend(name, runtime) for name in backend_names()}
    control_users = {}
    for name, backend in backends.items():
        user_id = make_user(f"secrets-{name.replace('_', '-')}")
        for message, _ in SECRET_MESSAGES:
            result = backend.turn(TurnContext(user_id=user_id, text=message))
            assert result.error is None, (name, message, result.error)
        drain(runtime, user_id=user_id)
        control_users[name] = make_user(f"control-{name.replace('_', '-')}")
        backend.turn(TurnContext(user_id=control_users[name], text=CONTROL))
        drain(runtime, user_id=control_users[name])
    logged = "\n".join(f"{record.name}: {record.getMessage()}" for record in caplog.records)
    places = {**_postgres_texts(runtime.engine), **_history_texts(history_db_path(runtime.settings)),
              **_data_files(data_dir), "log": logged}
    places = {place: UUID.sub("<id>", content) for place, content in places.items()}
    leaks, tried = [], 0
    for message, values in SECRET_MESSAGES:
        for value in values:
            pattern = _pattern(value)
            for place, content in places.items():
                tried += 1
                if pattern.search(content):
                    leaks.append(f"{value[:12]}... in {place}")
    record_figure(f"secrets: {len(SECRET_MESSAGES)} secret messages x {len(backends)} backends, "
                  "values searched in every store, file and the log", tried, leaks)
    for name in ("custom", "mem0", "memory_tool"):  # the search can find things: the plain fact was stored
        assert any(CONTROL_WORD in t.lower() for t in backends[name].stored_texts(control_users[name])), name


@pytest.mark.parametrize("message, values", SECRET_MESSAGES, ids=[m[:30] for m, _ in SECRET_MESSAGES])
def test_the_detector_and_the_redaction_catch_each_secret(message: str, values: list[str]) -> None:
    assert secret_reason(message) is not None
    redacted = redact(message).text
    assert REDACTED in redacted and not any(_pattern(value).search(redacted) for value in values)


@pytest.mark.parametrize("fact", [
    "I ran 10 km this morning.", "My daughter was born in 2019.", "I have a dentist appointment on Tuesday at 3 pm.",
    "I have been writing code since 2015.", "We moved to Porto last month.", "I keep three beehives in my garden.",
    "My flight leaves at 10:45 from gate 22.", "I am allergic to peanuts.",
])
def test_ordinary_facts_are_not_secrets(fact: str) -> None:
    assert secret_reason(fact) is None and redact(fact).text == fact


def test_checksums_and_the_generated_values() -> None:
    assert luhn_valid(CARD) and iban_valid(IBAN) and not iban_valid(IBAN[:-1] + str((int(IBAN[-1]) + 1) % 10))

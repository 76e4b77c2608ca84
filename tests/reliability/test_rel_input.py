"""Bad input through the backend interface: every backend answers every odd-but-valid
message (no exception escapes a turn, the text round-trips as stored, the next turn still
works), refuses empty and oversized ones before any model call, and the memory tool's
commands refuse unstorable text with the tool's own error.

The messages are this suite's own; each names the defect it probes (issue #15, item 5).
"""

from __future__ import annotations

import json

import pytest
from anthropic.lib.tools import ToolError
from pydantic import ValidationError
from sqlalchemy import select
from sqlmodel import Session

from backends.memory_tool.store import MemoryFileStore
from backends.memory_tool.tool import PostgresMemoryTool
from backends.registry import backend_names, build_backend
from chat.errors import plain_error
from core.turn import MAX_MESSAGE_CHARS, TurnContext, clean_text
from db.models import Job, Message
from jobs.runner import drain

ANSWERABLE = {
    "NUL byte": "I drink green tea\x00 every morning",
    "only NUL bytes": "\x00\x00\x00",
    "lone high surrogate": "half of an emoji \ud83d here",
    "lone low surrogate": "\udc9f at the start",
    "surrogate-escaped bytes": b"caf\xe9 in latin-1 and a stray \xff".decode("utf-8", "surrogateescape"),
    "control characters": "tab\there, bell\x07, escape \x1b[31mred\x1b[0m",
    "RTL Hebrew and Arabic": "אני אוהב לטייל בהרים. أحب القهوة في الصباح",
    "RTL override": "my file is called report\u202eetxt.exe",
    "emoji with joiners and flags": "I love 🐈‍⬛, 👩🏽‍💻 and 🇵🇹 🏳️‍🌈",
    "zero-width only": "\u200b\u200d\u2060",
    "raw HTML": "<script>alert('x')</script><img src=x onerror=alert(1)>",
    "markdown image": "![pixel](http://127.0.0.1:9/pixel.png) what do you think?",
    "at the length limit": ("seven letters " * (MAX_MESSAGE_CHARS // 14 + 1))[:MAX_MESSAGE_CHARS],
}
ROUND_TRIP = ("RTL Hebrew and Arabic", "RTL override", "emoji with joiners and flags", "raw HTML", "markdown image")
REFUSED = {
    "empty": "",
    "spaces": "     ",
    "whitespace mix": " \t\n\r\u00a0\u3000 ",
    "200k characters": "a long paste " * 15_400,
    "one over the limit": "x" * (MAX_MESSAGE_CHARS + 1),
}


@pytest.fixture(scope="module")
def backends(runtime):
    return {name: build_backend(name, runtime) for name in backend_names()}


def _stored_user_texts(engine, user_id: str) -> list[str]:
    with Session(engine) as session:
        rows = session.scalars(select(Message).where(Message.user_id == user_id, Message.role == "user")
                               .order_by(Message.created_at, Message.seq))
        return [row.text for row in rows if isinstance(json.loads(row.payload).get("content"), str)]


def _jobs(engine, user_id: str) -> list[Job]:
    with Session(engine) as session:
        return list(session.scalars(select(Job).where(Job.user_id == user_id)))


def test_every_backend_answers_odd_input_and_keeps_working(runtime, backends, make_user, record_figure) -> None:
    """Each odd message through each backend, then its jobs, then a plain follow-up turn."""
    failures: list[str] = []
    tried = 0
    for name, backend in backends.items():
        user_id = make_user(f"odd-{name.replace('_', '-')}")
        for label, text in ANSWERABLE.items():
            tried += 1
            try:
                result = backend.turn(TurnContext(user_id=user_id, text=text))
            except Exception as error:  # noqa: BLE001 - the figure counts it
                failures.append(f"{name} / {label}: raised {type(error).__name__}: {plain_error(error)}")
                continue
            if result.error or not result.reply.strip():
                failures.append(f"{name} / {label}: error={result.error!r} reply={result.reply[:60]!r}")
        drain(runtime, user_id=user_id)
        stored = _stored_user_texts(runtime.engine, user_id)
        for label in ROUND_TRIP:
            tried += 1
            if ANSWERABLE[label] not in stored:
                failures.append(f"{name} / {label}: not stored byte for byte")
        tried += 1
        if any("\x00" in text for text in stored):
            failures.append(f"{name}: a NUL byte was stored")
        for job in _jobs(runtime.engine, user_id):
            tried += 1
            if job.state != "done":
                failures.append(f"{name}: job {job.kind} ended {job.state}: {(job.last_error or '')[:120]}")
            if len(json.dumps(job.payload)) > 400:
                failures.append(f"{name}: job {job.kind} payload is {len(json.dumps(job.payload))} characters (ids only?)")
        tried += 1
        follow_up = backend.turn(TurnContext(user_id=user_id, text="Thanks. What is a good name for a cat?"))
        if follow_up.error or not follow_up.reply.strip():
            failures.append(f"{name}: the follow-up turn failed: {follow_up.error!r}")
    record_figure("input: odd messages x backends answered, stored, jobs done, next turn works", tried, failures)


def test_empty_and_oversized_messages_are_refused_by_the_interface(runtime, backends, make_user, record_figure) -> None:
    """Refused when the turn is described, before any backend or model sees it: nothing
    stored, nothing queued, and the refusal is one short sentence without the text."""
    user_id = make_user("refused")
    failures: list[str] = []
    for label, text in REFUSED.items():
        try:
            TurnContext(user_id=user_id, text=text)
        except ValidationError as error:
            shown = plain_error(error)
            if len(shown) > 120 or text.strip() and text[:40] in shown:
                failures.append(f"{label}: refusal too long or echoes the text: {shown[:150]!r}")
            continue
        failures.append(f"{label}: accepted")
    if _stored_user_texts(runtime.engine, user_id) or _jobs(runtime.engine, user_id):
        failures.append("something was stored or queued for the refused messages")
    record_figure("input: empty, whitespace and oversized messages refused by the interface", len(REFUSED), failures)


def test_cleaning_keeps_every_valid_character() -> None:
    """Only what Postgres or UTF-8 cannot carry is replaced; everything else is kept as typed."""
    for label in ROUND_TRIP:
        assert clean_text(ANSWERABLE[label]) == ANSWERABLE[label], label
    assert clean_text("a\x00b\ud800c") == "a\ufffdb\ufffdc"


def _commands_with(text: str) -> list[dict]:
    target = "/memories/notes.md"
    return [
        {"command": "create", "path": "/memories/new.md", "file_text": f"- {text}"},
        {"command": "create", "path": target, "file_text": f"- {text}"},  # overwrite
        {"command": "str_replace", "path": target, "old_str": "- tea", "new_str": f"- {text}"},
        {"command": "str_replace", "path": target, "old_str": text, "new_str": "- coffee"},
        {"command": "insert", "path": target, "insert_line": 1, "insert_text": f"- {text}"},
        {"command": "view", "path": target, "view_range": [1, -1]},
    ]


UNSTORABLE = {"a NUL byte": "NUL \x00 inside", "a lone surrogate": "lone \ud800 surrogate",
              "a surrogate-escaped byte": "escaped \udcff byte"}


@pytest.mark.parametrize("label", list(UNSTORABLE))
def test_memory_tool_refuses_unstorable_text_with_its_own_error(runtime, make_user, label, record_figure) -> None:
    bad = UNSTORABLE[label]
    user_id = make_user("mt-nul")
    store = MemoryFileStore(runtime.engine, user_id, runtime.clock)
    store.create("/memories/notes.md", "- tea\n")
    tool = PostgresMemoryTool(store)
    failures: list[str] = []
    commands = _commands_with(bad)
    for command in commands:
        try:
            tool.call(command)
        except ToolError:
            continue
        except Exception as error:  # noqa: BLE001 - the figure counts it
            failures.append(f"{command['command']}: raised {type(error).__name__}")
            continue
        if command["command"] != "view":
            failures.append(f"{command['command']}: accepted {bad!r}")
    if store.get("/memories/notes.md").content != "- tea\n" or store.get("/memories/new.md") is not None:
        failures.append("a file changed")
    record_figure(f"input: memory-tool commands with {label} give a ToolError", len(commands), failures)

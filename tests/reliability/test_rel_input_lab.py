"""Bad input through the lab itself (Streamlit AppTest, every column): a bad message is
answered or refused in plain words and the session keeps working after it; images in a
message or a reply are shown as text; a reply cut at max_tokens is marked as cut."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ui import resources
from streamlit.testing.v1 import AppTest

from backends.registry import backend_names
from chat.turn import CUT_NOTE
from offline_model.server import ensure_running

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180
UNESCAPED_IMAGE = re.compile(r"(?<!\\)!\[")
RAW_MARKS = ("[SQL", "[parameters", "Traceback", "autoflush", "psycopg", "sqlalchemy")


@pytest.fixture(scope="module", autouse=True)
def _stop_lab_scheduler():
    """The lab starts one scheduler per process; stop it when these tests are done."""
    yield
    resources.stop_scheduler()


@pytest.fixture()
def lab(runtime, user_id):
    """The main page with a fresh user of its own (marked as made in the lab: the picker lists only those)."""
    runtime.store.ensure_user(user_id, lab_user=True)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.session_state["lab_user"] = user_id
    at.run()
    assert not at.exception, at.exception
    return at


def replies(at: AppTest) -> list[str]:
    return [m.markdown[0].value for m in at.chat_message if m.name == "assistant" and m.markdown]


def send(at: AppTest, text: str) -> None:
    at.chat_input[0].set_value(text).run()


def screen_problems(at: AppTest) -> list[str]:
    """What a person must never see: an exception, a raw error, an over-long error."""
    problems = [f"exception: {str(at.exception)[:200]}"] if at.exception else []
    for error in [*at.error, *at.warning]:
        problems += [f"raw {mark!r} on screen" for mark in RAW_MARKS if mark.lower() in error.value.lower()]
        if len(error.value) > 300:
            problems.append(f"a {len(error.value)}-character error on screen")
    return problems


BAD_MESSAGES = {  # lone surrogates cannot arrive here (a browser sends UTF-8); test_rel_input.py covers them
    "NUL byte": "I like oolong\x00 tea",
    "only NUL bytes": "\x00\x00",
    "control characters": "bell\x07 escape\x1b[2J",
    "RTL": "שלום, מה שלומך היום?",
    "emoji": "🐙🦑 and 👨‍👩‍👧",
    "HTML": "<b>bold?</b> <script>alert(1)</script>",
}


def test_after_each_bad_message_the_session_keeps_working(lab, record_figure) -> None:
    columns = len(backend_names())
    problems: list[str] = []
    tried = 0
    for label, text in BAD_MESSAGES.items():
        for step, message in ((label, text), (f"after {label}", f"And a normal message after the {label.lower()}.")):
            tried += 1
            before = len(replies(lab))
            send(lab, message)
            issues = screen_problems(lab) + [f"column error: {e.value[:120]}" for e in lab.error]
            if len(replies(lab)) != before + columns:
                issues.append(f"{len(replies(lab)) - before} of {columns} columns answered")
            if issues:
                problems.append(f"{step}: {'; '.join(issues)}")
    for label in ("RTL", "emoji"):
        tried += 1
        if not any(BAD_MESSAGES[label] in m.value for m in lab.markdown):
            problems.append(f"{label} not shown as typed")
    record_figure("lab: bad messages and the message after each, every column answers, nothing raw", tried, problems)


def test_empty_whitespace_and_huge_messages_are_refused_in_the_lab(lab, record_figure) -> None:
    problems: list[str] = []
    cases = {"empty": "", "whitespace": " \n\t  ", "200k paste": "paste " * 34_000}
    for label, text in cases.items():
        send(lab, text)
        if replies(lab):
            problems.append(f"{label}: reached the backends")
        problems += [f"{label}: {issue}" for issue in screen_problems(lab)]
    send(lab, "Hello after the refusals.")
    if len(replies(lab)) != len(backend_names()):
        problems.append("the next message was not answered in every column")
    record_figure("lab: empty, whitespace and 200k messages refused, the next one answered", len(cases) + 1, problems)


def test_images_in_messages_and_replies_are_text(lab, record_figure) -> None:
    send(lab, "Look at this ![pixel](http://127.0.0.1:9/pixel.png) and ![ref][r]\n\n[r]: http://127.0.0.1:9/r.png")
    shown = [element.value for element in lab.markdown]
    images = [value[:120] for value in shown if UNESCAPED_IMAGE.search(value)]
    record_figure("lab: markdown images rendered as text, not <img>", len(shown), images)


def test_a_cut_reply_is_marked_as_cut(lab, record_figure) -> None:
    lab.multiselect(key="lab_enabled_backends").set_value(["none", "custom"]).run()
    faults = ensure_running().faults
    faults.inject("max_tokens", times=2)  # the two chat calls of this turn (extraction runs after)
    try:
        send(lab, "Tell me a long story about a lighthouse keeper.")
    finally:
        faults.clear()
    marked = [w.value for w in lab.warning if w.value == CUT_NOTE]
    problems = [] if len(marked) == 2 else [f"{len(marked)} of 2 cut replies marked"]
    send(lab, "Thanks, and a short one?")
    problems += [f"after the cut: {issue}" for issue in screen_problems(lab)]
    if [w.value for w in lab.warning if w.value == CUT_NOTE] != marked:
        problems.append("a reply that was not cut is marked")
    record_figure("lab: replies cut at max_tokens are marked as cut", 2, problems)

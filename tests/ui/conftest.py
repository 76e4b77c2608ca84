"""AppTest helpers: the lab's scripts run in-process, so the root conftest's environment
(private embedded Postgres, offline model, no network) applies to them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ui import resources
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180  # the first run starts Postgres and loads MiniLM


@pytest.fixture()
def lab(runtime, user_id):
    """The main page, started, with a fresh user of its own selected (marked as made in the
    lab's picker: the picker lists only those)."""
    runtime.store.ensure_user(user_id, lab_user=True)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.session_state["lab_user"] = user_id
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="session", autouse=True)
def _stop_lab_scheduler():
    """The lab starts one scheduler per process; stop it before the interpreter exits."""
    yield
    resources.stop_scheduler()

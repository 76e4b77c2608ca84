"""The lab under trouble: an API error is a readable line in each column (never a
traceback) and the conversation survives it; a backend that raises does not stop the
others; a configuration mistake at start is one line saying what to change."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from backends.base import ErasureReport, MemoryBackend, MemoryRecord, Recall, TurnContext, TurnResult
from backends.registry import build_backend
from offline_model.server import ensure_running
from settings import get_settings
from ui import resources
from ui.parallel import run_parallel

REPO = Path(__file__).resolve().parents[2]


class StoreDownBackend(MemoryBackend):
    """A backend whose memory store is unreachable: recall raises before any model call."""

    name = "store_down"
    label = "Store down"

    def prepare_turn(self, context: TurnContext) -> Recall:
        raise ConnectionError("memory store unreachable")

    def run_turn(self, context: TurnContext, recall: Recall, on_text=None) -> TurnResult:
        raise AssertionError("never reached")

    def new_conversation(self, user_id: str) -> None:
        return None

    def list_memories(self, user_id: str, include_inactive: bool = False) -> list[MemoryRecord]:
        return []

    def erase_user(self, user_id: str) -> ErasureReport:
        return ErasureReport(backend=self.name, user_id=user_id)


def test_a_failing_backend_does_not_stop_the_others(runtime, user_id):
    streamed: dict[str, str] = {}
    backends = {"store_down": StoreDownBackend(), "none": build_backend("none", runtime)}
    results = run_parallel(backends, TurnContext(user_id=user_id, text="Hello?"),
                           update=lambda name, text: streamed.__setitem__(name, text))
    assert results["store_down"].error == "This backend failed: ConnectionError: memory store unreachable"
    assert results["none"].error is None
    assert results["none"].reply == "Hi! What can I help you with today?"
    assert streamed["none"] == results["none"].reply  # streamed to its column as it came
    assert "store_down" not in streamed


def test_rate_limit_is_a_readable_message_and_the_chat_recovers(lab):
    lab.multiselect(key="lab_enabled_backends").set_value(["none", "custom"]).run()
    faults = ensure_running().faults
    faults.inject("rate_limit", times=None, retry_after=0)
    try:
        lab.chat_input[0].set_value("Are you there?").run()
    finally:
        faults.clear()
    assert not lab.exception, lab.exception
    errors = [error.value for error in lab.error]
    assert errors == ["The model is rate-limited (429): wait a little and send the message again."] * 2, errors

    lab.chat_input[0].set_value("Are you there now?").run()
    assert not lab.exception, lab.exception
    replies = [m.markdown[0].value for m in lab.chat_message if m.name == "assistant" and m.markdown]
    assert len(replies) == 2


def test_a_settings_error_at_start_is_one_line(monkeypatch):
    monkeypatch.setenv("MIN_SIMILARITY", "5")
    monkeypatch.setattr(resources, "_startup", None)  # as if this process had not started the lab yet
    get_settings.cache_clear()
    try:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60).run()
        assert not at.exception, at.exception
        assert [error.value for error in at.error] == [
            "Configuration problem: Invalid setting MIN_SIMILARITY: Input should be less than or equal to 1 (got '5')"
        ]
        assert not at.chat_input
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()

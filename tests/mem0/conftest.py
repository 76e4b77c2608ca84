"""Shared pieces of the Mem0 tests: one backend on the session's embedded Postgres and the
offline model, and a helper that runs a turn and then its `mem0.add` job in-process."""

from __future__ import annotations

import pytest

from backends.base import Knobs, TurnContext, TurnResult
from backends.mem0_backend.backend import Mem0Backend
from backends.mem0_backend.jobs import add_payload, run_add
from runtime import Runtime


@pytest.fixture(scope="session")
def mem0_backend(runtime: Runtime) -> Mem0Backend:
    return Mem0Backend(runtime)


def chat(backend: Mem0Backend, user_id: str, text: str, **knobs: object) -> TurnResult:
    """One turn (recall, model call, persisted messages), without its after-turn job."""
    context = TurnContext(user_id=user_id, text=text, knobs=Knobs(**knobs))
    result = backend.run_turn(context, backend.prepare_turn(context))
    assert result.error is None, result.error
    return result


def chat_and_add(backend: Mem0Backend, user_id: str, text: str) -> tuple[TurnResult, dict | None]:
    """A turn followed by its `mem0.add` handler, called directly (as the queue would)."""
    result = chat(backend, user_id, text)
    payload = add_payload(user_id, result.user_message_id, result.assistant_message_id)
    return result, run_add(backend.runtime, payload, None)

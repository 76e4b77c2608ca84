"""The request for turn N+1 starts with turn N's exact bytes, so the prompt cache hits."""

from __future__ import annotations

import json

from backends.base import Note, Recall, TurnContext
from chat.history import History
from chat.injection import format_notes
from chat.turn import ChatTurnRunner
from llm.anthropic_chat import SYSTEM_MESSAGE_BETA, AnthropicChat
from tests.fakes.anthropic_sse import CannedAnthropic


def _runner(runtime, canned: CannedAnthropic) -> ChatTurnRunner:
    model = AnthropicChat(runtime.settings, model="claude-sonnet-5-5", client=canned.client)
    history = History(runtime.engine, runtime.store, model, budget_tokens=100_000)
    return ChatTurnRunner("bytes-test", runtime.store, history, model)


def _recall(content: str) -> Recall:
    notes = [Note(memory_id="m", kind="semantic", content=content)]
    return Recall(notes=notes, system_message=format_notes(notes))


def test_each_request_extends_the_previous_one_byte_for_byte(runtime, user_id):
    canned = CannedAnthropic()
    runner = _runner(runtime, canned)
    turns = [("I'm vegetarian.", None), ("What should I cook?", "User is vegetarian."), ("And for dessert?", "User likes figs.")]
    for text, note in turns:
        recall = _recall(note) if note else Recall()
        result = runner.run(TurnContext(user_id=user_id, text=text), recall)
        assert result.error is None, result.error

    bodies = canned.bodies()
    assert len(bodies) == 3
    for previous, current in zip(bodies, bodies[1:]):
        assert json.dumps(current["system"]) == json.dumps(previous["system"])
        assert json.dumps(current.get("tools")) == json.dumps(previous.get("tools"))
        before = json.dumps(previous["messages"], ensure_ascii=False)
        after = json.dumps(current["messages"], ensure_ascii=False)
        assert after.startswith(before[:-1]), "the earlier request's messages must be an exact prefix"
    assert bodies[0]["cache_control"] == {"type": "ephemeral"}
    assert all(SYSTEM_MESSAGE_BETA in request.headers["anthropic-beta"] for request in canned.requests)

    # The injected notes sit directly after their user message, with clear_at, and are replayed.
    last = bodies[2]["messages"]
    roles = [message["role"] for message in last]
    assert roles == ["user", "assistant", "user", "system", "assistant", "user", "system"]
    assert last[3]["clear_at"] == "next_user_message"
    assert "User is vegetarian." in last[3]["content"] and last[2]["content"] == "What should I cook?"
    assert "User likes figs." in last[6]["content"]


def test_a_failed_model_call_writes_nothing(runtime, user_id):
    runner = _runner(runtime, CannedAnthropic(fail_status=429))
    result = runner.run(TurnContext(user_id=user_id, text="hello"), _recall("User is vegetarian."))
    assert result.error == "The model is rate-limited (429): wait a little and send the message again."
    conversation = runtime.store.current_conversation(user_id, "bytes-test")
    assert runtime.store.load_messages(conversation.id, user_id) == []

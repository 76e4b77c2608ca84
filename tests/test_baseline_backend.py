"""The no-memory baseline end to end on the offline model: replies, usage, persistence."""

from __future__ import annotations

from backends.base import Knobs, TurnContext
from backends.registry import backend_names, build_backend
from llm.provider import OFFLINE_LABEL


def test_baseline_replies_with_the_offline_model_and_persists_the_turn(runtime, user_id):
    assert "none" in backend_names()
    backend = build_backend("none", runtime)
    streamed: list[str] = []
    first = backend.turn(TurnContext(user_id=user_id, text="I'm vegetarian, for what it's worth.", knobs=Knobs()), on_text=streamed.append)
    assert first.error is None
    assert first.model_label == OFFLINE_LABEL
    assert first.reply == "Got it, thanks for telling me."  # plain reply; the label says which model
    assert "".join(streamed) == first.reply
    assert first.usage.input_tokens > 0 and first.usage.output_tokens > 0
    assert first.recall.injected == [] and first.jobs == []

    second = backend.turn(TurnContext(user_id=user_id, text="What should I cook tonight?"))
    assert second.reply.startswith("Happy to suggest a few options.")  # no notes to use
    conversation = runtime.store.current_conversation(user_id, "none")
    rows = runtime.store.load_messages(conversation.id, user_id)
    assert [row.role for row in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[1].input_tokens == first.usage.input_tokens and rows[1].total_ms > 0

    backend.new_conversation(user_id)
    assert runtime.store.current_conversation(user_id, "none").id != conversation.id
    report = backend.erase_user(user_id)
    assert report.deleted["messages"] == 4 and report.deleted["conversations"] == 2

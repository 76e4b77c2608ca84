"""The rolling summary replaces the turns beyond the history budget."""

from __future__ import annotations

from backends.base import Recall, TurnContext
from chat.history import History, Summary, history_tokens
from chat.turn import ChatTurnRunner
from llm.anthropic_chat import AnthropicChat
from tests.fakes.anthropic_sse import CannedAnthropic

BUDGET = 600


class RecordingSummarizer:
    """Stands in for the model's summary call and records what it was asked to fold."""

    def __init__(self) -> None:
        self.requests: list[str] = []

    def parse(self, system, messages, output_model, max_tokens=2048):
        self.requests.append(messages[0]["content"])
        assert output_model is Summary
        return Summary(summary=f"summary #{len(self.requests)}")


def test_history_stays_within_budget_and_old_turns_become_a_summary(runtime, user_id):
    canned = CannedAnthropic()
    model = AnthropicChat(runtime.settings, model="claude-sonnet-5-5", client=canned.client)
    summarizer = RecordingSummarizer()
    history = History(runtime.engine, runtime.store, summarizer, budget_tokens=BUDGET)
    runner = ChatTurnRunner("history-test", runtime.store, history, model)

    for turn in range(24):
        text = f"turn {turn:02d}: " + "tell me more about gardening and tomatoes " * 6
        assert runner.run(TurnContext(user_id=user_id, text=text), Recall()).error is None

    conversation = runtime.store.current_conversation(user_id, "history-test")
    payloads = history.messages_for_request(user_id, conversation.id)
    first_blocks = payloads[0]["content"]
    assert first_blocks[0]["text"].startswith("<earlier_conversation_summary>")
    kept = [payloads[0] | {"content": first_blocks[1:]}] + payloads[1:]
    assert history_tokens(kept) <= BUDGET
    assert summarizer.requests, "turns beyond the budget were folded into a summary"
    assert "turn 00" in summarizer.requests[0]
    assert "turn 00" not in str(kept) and "turn 23" in str(kept)
    # The summary is stored (and so erasable) and covers the folded turns.
    stored = history.summary_for(conversation.id, user_id)
    assert stored is not None and stored.content == f"summary #{len(summarizer.requests)}"
    # Folding in halves keeps the prefix stable: far fewer folds than turns.
    assert len(summarizer.requests) <= 8
    # What the model was sent last also stayed within budget (plus the summary block).
    assert history_tokens(canned.bodies()[-1]["messages"]) <= BUDGET + 100

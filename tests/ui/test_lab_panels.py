"""What the lab shows under and inside the columns, on the real embedded Postgres and the
offline model: why the cache read nothing, the last turn side by side, the session chart
across conversations, and sliders that re-score the last message without a new turn."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from backends.registry import PLUGINS, backend_names
from ui.comparison import COLUMNS


def label(name: str) -> str:
    return next(plugin.build.label for plugin in PLUGINS if plugin.name == name)


def send(at: AppTest, text: str) -> AppTest:
    at.chat_input[0].set_value(text).run()
    assert not at.exception, at.exception
    return at


def replies(at: AppTest) -> list[str]:
    return [m.markdown[0].value for m in at.chat_message if m.name == "assistant" and m.markdown]


def button(at: AppTest, text: str):
    return next(element for element in at.button if element.label == text)


def column_text(at: AppTest, index: int) -> str:
    column = at.columns[index]
    return "\n".join(element.value for element in [*column.markdown, *column.caption])


def last_turns(at: AppTest) -> dict:
    """The TurnResults of the session's last turn, as the page keeps them."""
    user = at.session_state["lab_user"]
    return at.session_state["lab_turns"][user][-1].results


def test_a_first_short_turn_says_why_the_cache_read_nothing(lab):
    lab.multiselect(key="lab_enabled_backends").set_value(["none"]).run()
    send(lab, "Good morning!")
    result = last_turns(lab)["none"]
    assert result.usage.cache_read_tokens == 0 and result.history_messages == 0
    assert 0 < result.prompt_tokens < 1024
    reasons = [c.value for c in lab.caption if c.value.startswith("Cache read 0:")]
    assert reasons == [
        f"Cache read 0: first turn of the conversation, nothing cached yet; and the prompt ({result.prompt_tokens:,} "
        "tokens) is under the model's minimum cacheable length (1,024), so nothing was written either."
    ]
    send(lab, "And what about the afternoon?")
    second = [c.value for c in lab.caption if c.value.startswith("Cache read 0:")][-1]
    assert "first turn" not in second and "under the model's minimum cacheable length (1,024)" in second


def test_comparison_table_has_a_row_per_backend_with_the_turn_numbers(lab):
    send(lab, "I live in Lisbon and I like jazz.")
    table = lab.dataframe[0].value
    names = backend_names()
    assert list(table.columns) == list(COLUMNS)
    assert list(table["backend"]) == [label(name) for name in names]
    results = last_turns(lab)
    for name, (_, row) in zip(names, table.iterrows()):
        result = results[name]
        assert row["input tokens"] == result.usage.input_tokens > 0
        assert (row["output tokens"], row["cache read"], row["cache write"]) == (
            result.usage.output_tokens, result.usage.cache_read_tokens, result.usage.cache_write_tokens)
        assert (row["notes injected"], row["notes cut"]) == (len(result.recall.injected), len(result.recall.cut))
        assert row["total ms"] == round(result.timings.total_ms) and row["recall ms"] == round(result.timings.recall_ms)
        assert row["cost (USD)"] == round(result.cost_usd, 5) and row["status"] == "ok"


def test_the_chart_keeps_counting_turns_across_conversations(lab):
    lab.multiselect(key="lab_enabled_backends").set_value(["none", "custom"]).run()
    send(lab, "Hello there.")
    send(lab, "How are you today?")
    button(lab, "New conversation").click().run()
    assert not replies(lab)  # the columns show the new conversation only
    send(lab, "A fresh start.")
    figure = json.loads(lab.get("plotly_chart")[0].proto.spec)
    traces = [trace for trace in figure["data"] if trace["name"] == f"{label('none')}: input"]
    assert traces and traces[0]["x"] == [1, 2, 3]
    assert traces[0]["customdata"] == [1, 1, 2]  # conversation of each point
    assert [shape["x0"] for shape in figure["layout"]["shapes"]] == [2.5, 2.5]  # one line per subplot
    assert len(lab.dataframe[0].value) == 2  # the table shows the last turn only


def test_moving_the_similarity_slider_rescores_the_last_message_at_once(lab):
    lab.multiselect(key="lab_enabled_backends").set_value(["custom"]).run()
    lab.slider(key="knob_min_similarity").set_value(0.10).run()
    send(lab, "I am vegetarian.")
    button(lab, "New conversation").click().run()
    send(lab, "What should I cook for dinner?")
    before = column_text(lab, 0)
    assert "✅ User is vegetarian" in before and "Re-scored under the new knobs" not in before
    reply_count = len(replies(lab))

    lab.slider(key="knob_min_similarity").set_value(0.95).run()
    assert not lab.exception, lab.exception
    assert len(replies(lab)) == reply_count  # no new turn
    text = column_text(lab, 0)
    assert "Re-scored under the new knobs: 0 would be injected" in text, text
    rescored = text.split("Re-scored under the new knobs", 1)[1]
    assert "cut, below threshold: ~~User is vegetarian" in rescored
    assert "MIN_SIMILARITY 0.1 → 0.95" in rescored and "The model did not see this" in rescored
    # What the model saw is unchanged: the turn's own notes still say injected.
    assert "✅ User is vegetarian" in text.split("Re-scored under the new knobs", 1)[0]

    lab.slider(key="knob_min_similarity").set_value(0.10).run()
    assert "Re-scored under the new knobs" not in column_text(lab, 0)  # back to the knobs it ran with

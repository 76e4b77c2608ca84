"""The main page's flows, run in-process by AppTest against the real embedded Postgres and
the offline model (no mocks): replies in every column, the slider cutting a note,
user isolation, new conversation, the clock, and bad input."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from backends.registry import PLUGINS, backend_names
from ui.composer import MAX_MESSAGE_CHARS

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180



def label(name: str) -> str:
    """A backend's display label, from its class (without building it)."""
    return next(plugin.build.label for plugin in PLUGINS if plugin.name == name)


def replies(at: AppTest) -> list[str]:
    """The assistant replies shown (the offline model's replies carry no prefix: the UI labels the model)."""
    return [m.markdown[0].value for m in at.chat_message if m.name == "assistant" and m.markdown]


def button(at: AppTest, label: str):
    return next(element for element in at.button if element.label == label)


def send(at: AppTest, text: str) -> AppTest:
    at.chat_input[0].set_value(text).run()
    assert not at.exception, at.exception
    return at


def column_text(at: AppTest, index: int) -> str:
    """Every markdown and caption text inside one backend column."""
    column = at.columns[index]
    return "\n".join(element.value for element in [*column.markdown, *column.caption])


def test_message_gets_a_reply_in_every_enabled_column(lab):
    send(lab, "Hello there, I live in Lisbon.")
    names = backend_names()
    assert set(names) >= {"none", "custom", "mem0", "memory_tool"}
    assert len(replies(lab)) == len(names)
    assert [c.value for c in lab.caption if c.value.startswith("Model: ")] == ["Model: offline model (rule-based)"] * len(names)
    assert not lab.error, [e.value for e in lab.error]
    assert sorted(e.label for e in lab.expander) == sorted(f"What {label(name)} did" for name in names)
    for index in range(len(names)):
        assert "Hello there, I live in Lisbon." in column_text(lab, index)
        assert "| input tokens |" in column_text(lab, index)
    spec = lab.get("plotly_chart")[0].proto.spec
    assert '"turn"' in spec and "total ms" in spec


def test_only_the_enabled_backends_answer(lab):
    lab.multiselect(key="lab_enabled_backends").set_value(["none"]).run()
    send(lab, "Just the baseline, please.")
    assert len(replies(lab)) == 1
    assert [e.label for e in lab.expander] == ["What No memory (baseline) did"]


def test_min_similarity_slider_cuts_the_injected_note(lab):
    lab.multiselect(key="lab_enabled_backends").set_value(["custom"]).run()
    lab.slider(key="knob_min_similarity").set_value(0.10).run()
    send(lab, "I am vegetarian.")
    assert any(text.startswith("Noted:") and "vegetarian" in text for text in (e.value for e in lab.info)), \
        [e.value for e in lab.info]
    button(lab, "New conversation").click().run()
    assert not replies(lab)

    send(lab, "What should I cook for dinner?")
    notes = column_text(lab, 0)
    assert "✅ User is vegetarian" in notes, notes
    assert "vegetarian" in replies(lab)[-1]

    lab.slider(key="knob_min_similarity").set_value(0.95).run()
    send(lab, "What should I cook for dinner?")
    last_turn = column_text(lab, 0).rsplit("What should I cook for dinner?", 1)[1]
    assert "✅" not in last_turn
    assert "cut, below threshold: ~~User is vegetarian" in last_turn, last_turn
    assert "vegetarian" not in replies(lab)[-1]  # the cut note is not used


def test_switching_users_isolates_every_column(lab, make_user, runtime):
    send(lab, "My secret hobby is origami.")
    first_user = lab.session_state["lab_user"]
    other = runtime.store.ensure_user(make_user("other"), lab_user=True)
    lab.run()  # the picker now lists the new user
    lab.selectbox(key="lab_user_select").set_value(other).run()
    assert lab.session_state["lab_user"] == other
    assert not replies(lab)
    assert all("origami" not in element.value for element in lab.markdown)
    send(lab, "Hello from the other user.")
    assert len(replies(lab)) == len(backend_names())
    lab.selectbox(key="lab_user_select").set_value(first_user).run()
    texts = [element.value for element in lab.markdown]
    assert "My secret hobby is origami." in texts
    assert "Hello from the other user." not in texts


def test_a_new_session_shows_the_open_conversation_from_the_database(lab, user_id):
    send(lab, "Remember that I play the cello.")
    fresh = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    fresh.session_state["lab_user"] = user_id
    fresh.run()
    texts = [element.value for element in fresh.markdown]
    assert texts.count("Remember that I play the cello.") == len(backend_names())


def test_new_user_name_is_validated(lab):
    lab.text_input(key="lab_new_user").set_value("bad name!").run()
    button(lab, "Create user").click().run()
    assert any("is not allowed" in error.value for error in lab.sidebar.error)
    lab.text_input(key="lab_new_user").set_value("Zoe Test").run()
    button(lab, "Create user").click().run()
    assert lab.session_state["lab_user"] == "zoe-test"
    assert not lab.sidebar.error


def test_empty_message_is_ignored_and_huge_paste_is_kept(lab):
    send(lab, "   ")
    assert not replies(lab)
    huge = "lorem ipsum " * (MAX_MESSAGE_CHARS // 10)
    send(lab, huge)
    assert not replies(lab)
    assert any("the limit is 20,000" in error.value for error in lab.error)
    assert lab.text_area(key="lab_draft_box").value == huge
    lab.text_area(key="lab_draft_box").set_value("A shorter message.").run()
    button(lab, "Send this text").click().run()
    assert not lab.exception, lab.exception
    assert len(replies(lab)) == len(backend_names())
    assert not any("the limit is" in error.value for error in lab.error)


def test_advancing_the_clock_moves_the_lab_date(lab, runtime):
    before = runtime.clock.offset
    try:
        lab.number_input(key="lab_clock_days").set_value(10).run()
        button(lab, "Advance the clock").click().run()
        assert (runtime.clock.offset - before).days == 10
        assert any("(+10 days)" in caption.value for caption in lab.sidebar.caption)
    finally:
        runtime.clock.set_offset(before)


def test_incognito_recalls_nothing(lab):
    lab.multiselect(key="lab_enabled_backends").set_value(["custom"]).run()
    lab.toggle(key="knob_incognito").set_value(True).run()
    send(lab, "I am allergic to peanuts.")
    assert "Recall skipped: incognito" in column_text(lab, 0)
    assert not any(e.value.startswith("Noted:") for e in lab.info)


def test_a_reloaded_session_shows_the_agent_reply_without_its_tool_calls(lab, user_id):
    lab.multiselect(key="lab_enabled_backends").set_value(["memory_tool"]).run()
    send(lab, "Remember that my dog is called Rex.")
    assert lab.expander[0].markdown, "the agent made no tool call"
    fresh = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    fresh.session_state["lab_user"] = user_id
    fresh.run()
    texts = [element.value for element in fresh.markdown]
    assert "Remember that my dog is called Rex." in texts
    assert replies(fresh)  # the agent's reply is shown
    assert not any("[tool " in text or "tool_result" in text for text in texts), texts


def test_knobs_and_backend_choice_survive_a_visit_to_another_page(lab):
    lab.slider(key="knob_min_similarity").set_value(0.55).run()
    lab.multiselect(key="lab_enabled_backends").set_value(["none", "custom"]).run()
    lab.switch_page("pages/3_Jobs.py").run()
    assert not lab.exception, lab.exception
    lab.switch_page("app.py").run()
    assert lab.slider(key="knob_min_similarity").value == 0.55
    assert lab.multiselect(key="lab_enabled_backends").value == ["none", "custom"]

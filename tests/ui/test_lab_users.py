"""The user picker is the lab's: it lists demo and the users a person made in it, never
the users that evals, benchmarks or tests put in the database, and a session opens on demo."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180
EVAL_SHAPED = ("evf3d28be6-000-mem0-u1", "lc1a2b3c-26-custom-caroline", "bench-parallel-0a1b2c")


def fresh_lab() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def test_picker_lists_demo_and_hand_made_users_only(runtime):
    for user in EVAL_SHAPED:  # created the way any runner creates its users: unmarked
        runtime.store.ensure_user(user)
    at = fresh_lab()
    picker = at.selectbox(key="lab_user_select")
    assert picker.value == "demo" and at.session_state["lab_user"] == "demo"
    assert picker.options[0] == "demo"
    assert not set(EVAL_SHAPED) & set(picker.options)
    assert set(picker.options) == {"demo", *runtime.store.list_users(lab_only=True)}

    at.text_input(key="lab_new_user").set_value("Rosa Hand").run()
    next(b for b in at.button if b.label == "Create user").click().run()
    assert at.session_state["lab_user"] == "rosa-hand"
    again = fresh_lab()
    assert "rosa-hand" in again.selectbox(key="lab_user_select").options
    assert again.selectbox(key="lab_user_select").value == "demo"  # a new session still opens on demo


def test_a_session_left_on_an_eval_user_falls_back_to_demo(runtime):
    runtime.store.ensure_user(EVAL_SHAPED[0])
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.session_state["lab_user"] = EVAL_SHAPED[0]
    at.run()
    assert at.session_state["lab_user"] == "demo"

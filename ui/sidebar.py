"""The sidebar: who the user is (every page), and the main page's lab controls.

The user id always comes from here (the server session), never from model output; every
query the pages run is scoped by it.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core import KNOBS, InvalidUserId, Knobs
from runtime import Runtime
from ui import session

DEFAULT_USER = "demo"


def _create_user(runtime: Runtime) -> None:
    """on_click of "Create": validates the name, then switches to the new user."""
    raw = st.session_state.get("lab_new_user", "")
    try:
        user_id = runtime.store.ensure_user(raw, lab_user=True)
    except InvalidUserId as error:
        st.session_state["lab_user_error"] = str(error)
        return
    st.session_state.pop("lab_user_error", None)
    st.session_state["lab_new_user"] = ""
    session.set_user(user_id)


def _pick_user() -> None:
    session.set_user(st.session_state["lab_user_select"])


def picker_users(runtime: Runtime) -> list[str]:
    """demo first, then the users a person created here (marked `lab_user`), oldest first.

    Users that evals, benchmarks or tests created (unmarked, e.g. left in the database by
    an earlier version) are never listed: the picker is the lab's, not the database's.
    """
    runtime.store.ensure_user(DEFAULT_USER, lab_user=True)
    made = [user for user in runtime.store.list_users(lab_only=True) if user != DEFAULT_USER]
    return [DEFAULT_USER, *made]


def user_picker(runtime: Runtime) -> str:
    """Pick or create the user; returns the (validated) user id of this session."""
    users = picker_users(runtime)
    current = session.current_user()
    if current not in users:
        current = DEFAULT_USER
        session.set_user(current)
    st.session_state["lab_user_select"] = current
    with st.sidebar:
        st.selectbox("User", users, key="lab_user_select", on_change=_pick_user)
        st.text_input("New user", key="lab_new_user", placeholder="e.g. alice")
        st.button("Create user", on_click=_create_user, args=(runtime,))
        if error := st.session_state.get("lab_user_error"):
            st.error(error)
    return session.current_user() or current


@dataclass
class LabControls:
    enabled: list[str]
    knobs: Knobs
    new_conversation: bool
    advance_days: float


def lab_controls(runtime: Runtime, names: list[str], labels: dict[str, str]) -> LabControls:
    """New conversation, incognito, which backends, the knobs, the model and the clock."""
    defaults = runtime.settings.knobs()
    state = st.session_state
    state.setdefault("lab_enabled_backends", list(names))
    state["lab_enabled_backends"] = [name for name in state["lab_enabled_backends"] if name in names]
    # Defaults go into session state (not `value=`): the keys are re-assigned on every page
    # so they survive page switches, and a widget given both would warn.
    for spec in KNOBS:
        state.setdefault(session.knob_key(spec.name), getattr(defaults, spec.name))
    state.setdefault("knob_incognito", False)
    with st.sidebar:
        new_conversation = st.button("New conversation", type="primary", help="Every column starts a fresh conversation")
        st.toggle("Incognito (no recall, nothing stored)", key="knob_incognito")
        st.multiselect("Backends", names, key="lab_enabled_backends", format_func=lambda name: labels.get(name, name))
        st.subheader("Memory knobs (next turn)")
        for spec in KNOBS:
            low = spec.low if spec.slider_low is None else spec.slider_low
            st.slider(spec.label, low, spec.high, step=spec.step, key=session.knob_key(spec.name), help=spec.help)
        model_summary(runtime)
        advance_days = clock_control(runtime)
    return LabControls(state["lab_enabled_backends"], session.knobs_from_state(defaults), new_conversation, advance_days)


def model_summary(runtime: Runtime) -> None:
    summary = runtime.settings.public_summary()
    st.subheader("Model")
    st.caption(f"Chat: **{summary['chat_model']}** · extraction: **{summary['extraction_model']}**")
    st.caption(f"Provider {summary['provider']} · embedder {summary['embedder']} · database {summary['database']}")


def clock_control(runtime: Runtime) -> float:
    """Advance the lab clock (TTL and decay demos); returns the days advanced this run, or 0."""
    st.subheader("Lab clock")
    st.session_state.setdefault("lab_clock_days", 30)
    st.number_input("Days to advance", min_value=1, max_value=3650, step=1, key="lab_clock_days")
    days = float(st.session_state["lab_clock_days"]) if st.button("Advance the clock") else 0.0
    if days:
        runtime.clock.advance(days=days)
    offset_days = runtime.clock.offset.total_seconds() / 86400
    st.caption(f"Lab date: **{runtime.clock.now():%Y-%m-%d %H:%M} UTC** ({offset_days:+.0f} days)")
    return days

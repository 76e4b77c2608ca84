"""The lab's per-browser-session state, in one place.

Turns are kept per user so switching users switches every column at once, and across
"New conversation" (each turn carries its conversation number) so the chart follows the
whole session while the columns show only the open conversation; the knobs and
the chosen user live under plain (non-widget) keys so they survive a visit to another
page (Streamlit drops a widget's state when a page does not render that widget).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from core import KNOBS, Knobs, TurnResult

USER_KEY = "lab_user"
TURNS_KEY = "lab_turns"
CONVERSATION_KEY = "lab_conversation"
EARLIER_KEY = "lab_earlier"
EVENT_MARK_KEY = "lab_event_mark"
KNOB_KEYS = ("knob_min_similarity", "knob_half_life_days", "knob_max_memory_tokens", "knob_top_k", "knob_incognito")
PERSISTENT_WIDGET_KEYS = (*KNOB_KEYS, "lab_enabled_backends", "lab_clock_days")


@dataclass
class Turn:
    """One message sent to every enabled column, and what each backend did with it."""

    text: str
    results: dict[str, TurnResult] = field(default_factory=dict)
    noted: dict[str, list[str]] = field(default_factory=dict)
    wall_ms: float = 0.0
    knobs: Knobs | None = None
    """The knobs the turn ran with (a slider moved since then re-scores its notes)."""
    conversation: int = 0
    """Which of this session's conversations with the user it belongs to (0, 1, ...)."""


def keep_widget_state() -> None:
    """Re-assign the lab's widget values so they survive pages that do not draw them."""
    for key in PERSISTENT_WIDGET_KEYS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def current_user() -> str | None:
    return st.session_state.get(USER_KEY)


def set_user(user_id: str) -> None:
    st.session_state[USER_KEY] = user_id


def session_turns(user_id: str) -> list[Turn]:
    """Every turn of this session with the user, across conversations, oldest first."""
    return st.session_state.setdefault(TURNS_KEY, {}).setdefault(user_id, [])


def conversation_number(user_id: str) -> int:
    return st.session_state.setdefault(CONVERSATION_KEY, {}).get(user_id, 0)


def turns(user_id: str) -> list[Turn]:
    """This session's turns of the open conversation with the user."""
    current = conversation_number(user_id)
    return [turn for turn in session_turns(user_id) if turn.conversation == current]


def add_turn(user_id: str, turn: Turn) -> None:
    turn.conversation = conversation_number(user_id)
    session_turns(user_id).append(turn)


def earlier(user_id: str) -> dict[str, list[tuple[str, str, str | None]]] | None:
    """The transcript loaded from the database when this session first showed the user."""
    return st.session_state.setdefault(EARLIER_KEY, {}).get(user_id)


def set_earlier(user_id: str, transcripts: dict[str, list[tuple[str, str, str | None]]]) -> None:
    st.session_state.setdefault(EARLIER_KEY, {})[user_id] = transcripts


def clear_conversation(user_id: str) -> None:
    """Start a new displayed conversation (the backends start new ones themselves); the
    session's earlier turns stay for the chart."""
    conversations = st.session_state.setdefault(CONVERSATION_KEY, {})
    conversations[user_id] = conversations.get(user_id, 0) + 1
    st.session_state.setdefault(EARLIER_KEY, {})[user_id] = {}


def forget_user(user_id: str) -> None:
    """Drop everything this session shows about the user (after erasing their data)."""
    st.session_state.setdefault(TURNS_KEY, {})[user_id] = []
    st.session_state.setdefault(CONVERSATION_KEY, {}).pop(user_id, None)
    st.session_state.setdefault(EARLIER_KEY, {})[user_id] = {}


def knob_key(name: str) -> str:
    """The session-state key of a knob's slider."""
    return f"knob_{name}"


def knobs_from_state(defaults: Knobs) -> Knobs:
    """The knobs the sliders currently say, falling back to the settings' defaults."""
    state = st.session_state
    values = {spec.name: state.get(knob_key(spec.name), getattr(defaults, spec.name)) for spec in KNOBS}
    return Knobs(**values, incognito=state.get("knob_incognito", False))

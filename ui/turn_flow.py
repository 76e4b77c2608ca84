"""One message from the chat box to a finished `Turn`: every active backend in parallel,
streaming into its column, then this user's queued background work, then what it noted."""

from __future__ import annotations

import time

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from backends.base import Knobs, MemoryBackend, TurnContext
from chat.errors import log_error, plain_error
from runtime import Runtime
from ui.events import last_event_id, noted_since
from jobs.runner import drain
from ui.parallel import run_parallel
from ui.session import Turn

CURSOR = " ▌"


def run_background_work(runtime: Runtime, user_id: str) -> None:
    """Run this user's queued jobs now so "Noted: ..." can be said under this turn."""
    try:
        with st.spinner("Running background work (extraction, memory writes)…"):
            drain(runtime, user_id=user_id)
    except Exception as error:  # noqa: BLE001 - the replies are already in; say so, keep going
        log_error("background work", error)
        st.warning(f"Background work failed: {plain_error(error)}")


def run_turn(
    runtime: Runtime, user_id: str, text: str, knobs: Knobs,
    active: dict[str, MemoryBackend], placeholders: dict[str, DeltaGenerator],
) -> Turn:
    mark = last_event_id(runtime.engine, user_id)
    context = TurnContext(user_id=user_id, text=text, knobs=knobs)
    started = time.perf_counter()  # the one embedding of the message is part of the turn's wall time
    results = run_parallel(active, context, update=lambda name, so_far: placeholders[name].markdown(so_far + CURSOR),
                           embedder=runtime.embedder)
    turn = Turn(text=text, results=results, wall_ms=(time.perf_counter() - started) * 1000, knobs=knobs)
    if not knobs.incognito:
        run_background_work(runtime, user_id)
    turn.noted = noted_since(runtime.engine, user_id, mark)
    return turn

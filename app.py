"""Memory Lab: one conversation through several long-term memory backends, side by side.

Reads top to bottom: start the process-wide resources, pick the user and the knobs in the
sidebar, take one message, run it through every enabled backend in parallel (each column
streams its reply), run the queued background work, then draw every column's history,
what each backend did (re-scored at once when a slider moves), the last turn of every
backend side by side, and the session's tokens and latency chart.
"""

from __future__ import annotations

from ui import prestart

prestart.begin()  # before the heavier imports below, so initdb overlaps them

import streamlit as st  # noqa: E402

from ui import composer, session, sidebar  # noqa: E402
from llm.caching import min_cacheable_tokens  # noqa: E402
from ui.charts import conversation_figure  # noqa: E402
from ui.columns import cache_note, literal, render_earlier, render_rescored, render_result  # noqa: E402
from ui.comparison import render_comparison  # noqa: E402
from ui.page import open_page  # noqa: E402
from ui.transcript import open_transcript  # noqa: E402
from ui.turn_flow import run_turn  # noqa: E402

page = open_page(
    "Memory Lab",
    "One conversation, several long-term memory backends, side by side: what each remembers, "
    "what it puts back into the prompt, and what that costs.",
)
runtime, user_id, names, backends, failed, labels = (
    page.runtime, page.user_id, page.names, page.backends, page.failed, page.labels
)
controls = sidebar.lab_controls(runtime, names, labels)

if controls.new_conversation:
    for backend in backends.values():
        backend.new_conversation(user_id)
    session.clear_conversation(user_id)
    st.toast("New conversation in every column.")
if controls.advance_days:
    st.toast(f"Clock advanced by {controls.advance_days:.0f} days.")

enabled = controls.enabled
if not enabled:
    st.info("Choose at least one backend in the sidebar.")
    st.stop()

if session.earlier(user_id) is None:
    session.set_earlier(user_id, {name: open_transcript(runtime.engine, user_id, name) for name in names})
earlier = session.earlier(user_id) or {}
turns = session.turns(user_id)
cache_minimum = min_cacheable_tokens(runtime.settings)

# -- input --------------------------------------------------------------------------------
message = composer.incoming_message()
composer.render_draft()


# -- the columns ----------------------------------------------------------------------------
columns = dict(zip(enabled, st.columns(len(enabled))))
placeholders = {}
for name, column in columns.items():
    with column:
        st.markdown(f"#### {labels[name]}")
        if name in failed:
            st.error(f"{labels[name]} is not available: {failed[name]}")
            continue
        render_earlier(earlier.get(name, []))
        previous = None
        for turn in turns:
            if name not in turn.results:
                continue
            result = turn.results[name]
            with st.chat_message("user"):
                st.markdown(literal(turn.text))
            render_result(result, labels[name], turn.noted.get(name), cache_note(result, previous, cache_minimum))
            previous = result
        if turns and name in turns[-1].results and name in backends and not message:
            # the sliders answer at once: the last message's candidates under the current knobs
            render_rescored(backends[name], turns[-1].results[name].recall, turns[-1].knobs, controls.knobs)
        if message:
            with st.chat_message("user"):
                st.markdown(literal(message))
            with st.chat_message("assistant"):
                placeholders[name] = st.empty()
                placeholders[name].caption("thinking…")

if message:
    active = {name: backends[name] for name in enabled if name in backends}
    if active:
        session.add_turn(user_id, run_turn(runtime, user_id, message, controls.knobs, active, placeholders))
        st.rerun()

# -- the last turn side by side, and the session's chart ----------------------------------------
if turns:
    render_comparison(turns[-1].results, {name: labels[name] for name in enabled})
session_turns = session.session_turns(user_id)
if session_turns:
    last = session_turns[-1]
    answered = [result.timings.total_ms for result in last.results.values()]
    st.caption(
        f"Last turn: {last.wall_ms:,.0f} ms wall clock for {len(last.results)} backends in parallel "
        f"(slowest backend {max(answered, default=0):,.0f} ms, sum {sum(answered):,.0f} ms)."
    )
    st.plotly_chart(conversation_figure(session_turns, {name: labels[name] for name in enabled}), width="stretch")

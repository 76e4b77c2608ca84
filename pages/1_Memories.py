"""Memories: what each backend keeps about the user, why, and how to delete it."""

from __future__ import annotations

import streamlit as st

from ui import session
from ui.memories import INACTIVE, erase_everything, render_backend, report_rows
from ui.page import open_page

page = open_page("Memories", "What each backend remembers about the user, where it came from, and deletion.", "🗂️")
runtime, user_id = page.runtime, page.user_id

if flash := st.session_state.pop("memories_flash", None):
    st.success(flash)

toggles = st.columns(len(INACTIVE))
shown = {status for status, column in zip(INACTIVE, toggles) if column.toggle(f"Show {status}", key=f"show-{status}")}

tabs = st.tabs([page.labels[name] for name in page.names])
for name, tab in zip(page.names, tabs):
    with tab:
        if name in page.failed:
            st.error(f"{page.labels[name]} is not available: {page.failed[name]}")
            continue
        render_backend(runtime, user_id, page.backends[name], shown)

st.divider()
st.subheader("Delete all my data")
st.caption("Every memory, message, summary, file, job and log line about this user, in every backend.")
confirmed = st.checkbox(f"Yes, delete everything the lab holds about {user_id}", key="erase-confirm")
if st.button("Delete all my data", type="primary", disabled=not confirmed):
    with st.spinner("Erasing…"):
        reports, problem = erase_everything(runtime, user_id)
    session.forget_user(user_id)
    st.session_state["erasure_report"] = (user_id, report_rows(reports), problem)
    st.rerun()
if report := st.session_state.get("erasure_report"):
    erased_user, rows, problem = report
    if problem:
        st.error(f"Erasure of {erased_user} is incomplete, try again: {problem}")
    else:
        st.success(f"Erased {sum(row['deleted'] for row in rows)} rows/files about {erased_user}.")
    st.table(rows)

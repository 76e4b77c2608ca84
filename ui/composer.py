"""The one chat input, with the bad-input rules: empty messages are ignored, and a huge
paste is refused with a clear message while its text is kept on screen (nothing lost)."""

from __future__ import annotations

import streamlit as st

from core.turn import MAX_MESSAGE_CHARS  # the interface's own limit (TurnContext refuses longer text too)
DRAFT_KEY = "lab_draft"
DRAFT_BOX_KEY = "lab_draft_box"
SEND_DRAFT_KEY = "lab_send_draft"


def incoming_message() -> str | None:
    """The text to send this run, or None (nothing typed, empty, or refused as too long)."""
    prompt = st.chat_input("Message every backend at once")
    if prompt is None and st.session_state.get(SEND_DRAFT_KEY):
        prompt = st.session_state.get(DRAFT_BOX_KEY, "")
    if prompt is None:
        return None
    text = prompt.strip()
    if not text:
        st.toast("Empty message ignored.")
        return None
    if len(text) > MAX_MESSAGE_CHARS:
        st.session_state[DRAFT_KEY] = prompt
        st.session_state[DRAFT_BOX_KEY] = prompt
        return None
    st.session_state.pop(DRAFT_KEY, None)
    return text


def render_draft() -> None:
    """Show a refused message back, editable, with a button to send the shortened text."""
    draft = st.session_state.get(DRAFT_KEY)
    if draft is None:
        return
    st.error(
        f"That message is {len(draft.strip()):,} characters; the limit is {MAX_MESSAGE_CHARS:,}. "
        "Nothing was sent and your text is kept below: shorten it, then send it."
    )
    st.text_area("Your message (not sent)", key=DRAFT_BOX_KEY, height=200)
    st.button("Send this text", key=SEND_DRAFT_KEY)

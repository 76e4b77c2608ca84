"""Memory Lab: one conversation through several long-term memory backends, side by side."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Memory Lab", layout="wide")
st.title("Memory Lab")
st.caption("The lab's main page is being built; the backends run behind one interface.")

"""Small helpers for the lab's Streamlit pages: one idea per module, no backend-specific code."""

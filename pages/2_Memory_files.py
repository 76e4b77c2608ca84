"""Memory files: the files a backend keeps under /memories for the user (the memory-tool agent's)."""

from __future__ import annotations

import streamlit as st

from ui.columns import md_escape
from ui.files import delete_file, file_records, file_text, tree_lines
from ui.page import open_page

page = open_page("Memory files", "The user's /memories tree, as the agent wrote it.", "📁")
user_id = page.user_id

if flash := st.session_state.pop("files_flash", None):
    st.success(flash)

shown = 0
for name, backend in page.backends.items():
    files = file_records(backend.list_memories(user_id))
    if not files:
        continue
    shown += 1
    st.subheader(page.labels[name])
    tree, viewer = st.columns([1, 2])
    with tree:
        st.code("/\n" + "\n".join(tree_lines(list(files))) if files else "(empty)", language=None)
    with viewer:
        path = st.selectbox("File", list(files), key=f"file-{name}")
        lines = files[path]
        st.code(file_text(lines), language="markdown", wrap_lines=True)
        st.caption(f"{len(lines)} non-empty lines")
        for record in lines:
            left, right = st.columns([6, 1])
            left.markdown(md_escape(record.content))
            if right.button("Delete", key=f"line-{name}-{record.id}"):
                ok = backend.delete_memory(user_id, record.id)
                st.session_state["files_flash"] = f"Deleted line: {record.content}" if ok else "That line was already gone."
                st.rerun()
        if st.button(f"Delete {path}", key=f"delete-file-{name}-{path}", type="primary"):
            count = delete_file(backend, user_id, lines)
            st.session_state["files_flash"] = f"Deleted {path} ({count} lines)."
            st.rerun()

for name, error in page.failed.items():
    st.error(f"{page.labels[name]} is not available: {error}")
if not shown:
    st.info(f"No memory files for {user_id} yet: chat with the memory-tool agent and ask it to remember something.")

"""Drawing a backend's stored memories: status filters, lineage, provenance, deletion.

Generic over `MemoryRecord`: a backend without versions simply has one record per
lineage, one without provenance shows none.
"""

from __future__ import annotations


import streamlit as st

from backends.base import ErasureReport, MemoryBackend, MemoryRecord
from runtime import Runtime
from ui.columns import md_escape
from backends.erasure import ErasureIncomplete, erase_user_everywhere

INACTIVE = ("superseded", "retracted", "expired")


def visible(records: list[MemoryRecord], shown: set[str]) -> list[MemoryRecord]:
    """Live rows always; inactive ones only when their toggle is on."""
    return [record for record in records if record.status == "live" or record.status in shown]


def lineages(records: list[MemoryRecord]) -> list[list[MemoryRecord]]:
    """Versions grouped by lineage, newest first inside a group, groups by newest version."""
    groups: dict[str, list[MemoryRecord]] = {}
    for record in records:
        groups.setdefault(record.lineage_id or record.id, []).append(record)
    ordered = [sorted(group, key=lambda r: (r.status != "live", -(r.created_at.timestamp() if r.created_at else 0)))
               for group in groups.values()]
    return sorted(ordered, key=lambda g: -max((r.created_at.timestamp() if r.created_at else 0) for r in g))


def record_meta(record: MemoryRecord) -> str:
    parts = [record.status, record.kind]
    if record.created_at:
        parts.append(f"stored {record.created_at:%Y-%m-%d}")
    if record.last_used_at:
        parts.append(f"last used {record.last_used_at:%Y-%m-%d}")
    if record.expires_at:
        parts.append(f"expires {record.expires_at:%Y-%m-%d}")
    if record.importance is not None:
        parts.append(f"importance {record.importance:.2f}")
    if record.location is not None:
        parts.append(f"{record.location.path}:{record.location.line}")
    return " · ".join(parts)


def source_text(runtime: Runtime, user_id: str, record: MemoryRecord) -> str | None:
    """The user's message the memory came from (scoped to the session's user)."""
    if record.source_text:
        return record.source_text
    if record.source_message_id:
        return runtime.store.message_text(user_id, record.source_message_id)
    return None


def render_provenance(runtime: Runtime, user_id: str, record: MemoryRecord) -> None:
    source = source_text(runtime, user_id, record)
    if not record.evidence and not source:
        return
    with st.expander("Why do you think that?"):
        if record.evidence:
            st.markdown(f"**Evidence quote:** “{md_escape(record.evidence)}”")
        if source:
            st.markdown("**Source message:**")
            st.text(source[:2000])


def render_record(runtime: Runtime, user_id: str, backend: MemoryBackend, record: MemoryRecord, version: str) -> None:
    with st.container(border=True, key=f"memory-{backend.name}-{record.id}"):
        text = md_escape(record.content)
        st.markdown(text if record.status == "live" else f":gray[~~{text}~~]")
        st.caption(" · ".join(part for part in (version, record_meta(record)) if part))
        render_provenance(runtime, user_id, record)
        st.button("Delete", key=f"delete-{backend.name}-{record.id}", on_click=delete_record,
                  args=(backend, user_id, record))


def delete_record(backend: MemoryBackend, user_id: str, record: MemoryRecord) -> None:
    """on_click: hard-delete (every version of its lineage where the backend keeps versions)."""
    deleted = backend.delete_memory(user_id, record.id)
    st.session_state["memories_flash"] = (
        f"Deleted from {backend.label}: {record.content}" if deleted else f"{backend.label} could not delete that memory."
    )


def render_backend(runtime: Runtime, user_id: str, backend: MemoryBackend, shown: set[str]) -> None:
    records = visible(backend.list_memories(user_id, include_inactive=bool(shown)), shown)
    live = sum(record.status == "live" for record in records)
    st.caption(f"{live} live memories" + (f", {len(records) - live} inactive shown" if len(records) > live else ""))
    if not records:
        st.info(f"{backend.label} holds no memories for {user_id}.")
    for group in lineages(records):
        for number, record in enumerate(group):
            version = "current" if number == 0 else f"earlier version {number}"
            render_record(runtime, user_id, backend, record, version if len(group) > 1 else "")
    render_forget(user_id, backend)


def render_forget(user_id: str, backend: MemoryBackend) -> None:
    with st.form(f"forget-{backend.name}", clear_on_submit=True):
        topic = st.text_input("Forget a topic", placeholder="e.g. my dog", key=f"forget-topic-{backend.name}")
        if st.form_submit_button("Forget") and topic.strip():
            gone = backend.forget(user_id, topic.strip())
            st.session_state["memories_flash"] = (
                f"{backend.label} forgot {len(gone)} memories about “{topic.strip()}”"
                + (": " + "; ".join(record.content for record in gone) if gone else ".")
            )
            st.rerun()


def erase_everything(runtime: Runtime, user_id: str) -> tuple[list[ErasureReport], str | None]:
    """Every copy of the user's data, in every backend and the rows no backend owns. Returns
    the reports and, when some store could not be erased, why (the reports then cover what
    was erased)."""
    try:
        return list(erase_user_everywhere(runtime, user_id)), None
    except ErasureIncomplete as error:  # carries partial reports; say what is left
        return list(error.reports), str(error)


def report_rows(reports: list[ErasureReport]) -> list[dict[str, object]]:
    return [{"backend": report.backend, "store": store, "deleted": count}
            for report in reports for store, count in report.deleted.items()]

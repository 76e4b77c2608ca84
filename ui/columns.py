"""How one backend's turn is drawn in its column: the reply, its label, and the
"What <backend> did" expander (notes injected and cut, tool calls, metrics).

Everything here reads only `backends.base` models, so every backend is drawn the same
way and a new backend needs no UI change.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import streamlit as st

from backends.base import Knobs, MemoryBackend, Note, Recall, ToolCall, TurnResult
from chat.turn import CUT_NOTE
from core import KNOBS
from llm.caching import cache_miss_reason

CUT_REASONS = {
    "below_threshold": "below threshold",
    "over_budget": "over budget",
    "not_selected": "not selected (top-k)",
}
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+!|~$<>:-])")


def md_escape(text: str) -> str:
    """Show user and model text literally (no accidental markdown, links or LaTeX)."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text.replace("\n", " "))


def _number(name: str, value: float | None) -> str | None:
    return None if value is None else f"{name} {value:.2f}"


def note_meta(note: Note) -> str:
    """kind, date, similarity, recency, importance, final score, tokens: why it went in or not."""
    date = note.created_at.date().isoformat() if isinstance(note.created_at, datetime) else "undated"
    numbers = [
        _number("similarity", note.similarity),
        _number("recency", note.recency),
        _number("importance", note.importance),
        _number("score", note.score),
    ]
    return " · ".join([note.kind, date, *(part for part in numbers if part), f"{note.tokens} tok"])


def note_line(note: Note) -> str:
    if note.status == "injected":
        return f"- ✅ {md_escape(note.content)}  \n  `{note_meta(note)}`"
    reason = CUT_REASONS.get(note.status, note.status)
    return f"- :gray[✂ cut, {reason}: ~~{md_escape(note.content)}~~]  \n  :gray[{md_escape(note_meta(note))}]"


def render_recall(recall: Recall) -> None:
    if recall.skipped_reason:
        st.caption(f"Recall skipped: {recall.skipped_reason}")
    if recall.requested or recall.returned:
        st.caption(f"Asked the store for {recall.requested}, it returned {recall.returned}.")
    if not recall.notes:
        st.caption("No notes recalled.")
        return
    st.markdown(f"**Notes: {len(recall.injected)} injected, {len(recall.cut)} cut**")
    st.markdown("\n".join(note_line(note) for note in recall.notes))
    if recall.system_message:
        st.caption("Injected system message")
        st.code(recall.system_message, language=None, wrap_lines=True)


def tool_line(call: ToolCall) -> str:
    target = " ".join(part for part in (call.command, call.path) if part)
    status = "error" if call.is_error else "ok"
    return f"**{md_escape(call.name)}** {md_escape(target)} ({status})"


def render_tool_calls(calls: list[ToolCall]) -> None:
    if not calls:
        return
    st.markdown(f"**Tool calls: {len(calls)}**")
    for call in calls:
        st.markdown(tool_line(call))
        st.code(json.dumps(call.input, ensure_ascii=False, indent=1)[:1500], language="json", wrap_lines=True)
        st.code(call.result[:1500] or "(empty result)", language=None, wrap_lines=True)


def metrics_table(result: TurnResult) -> str:
    usage, timings = result.usage, result.timings
    ttft = "-" if timings.ttft_ms is None else f"{timings.ttft_ms:.0f}"
    rows = [
        ("input tokens", f"{usage.input_tokens:,}"),
        ("output tokens", f"{usage.output_tokens:,}"),
        ("cache-read tokens", f"{usage.cache_read_tokens:,}"),
        ("cache-write tokens", f"{usage.cache_write_tokens:,}"),
        ("recall ms", f"{timings.recall_ms:.0f}"),
        ("time to first token ms", ttft),
        ("total ms", f"{timings.total_ms:.0f}"),
        ("estimated cost", f"${result.cost_usd:.5f}"),
    ]
    return "\n".join(["| metric | value |", "|---|---:|", *(f"| {name} | {value} |" for name, value in rows)])


def cache_note(result: TurnResult, previous: TurnResult | None, minimum: int) -> str | None:
    """Why this turn read nothing from the prompt cache (None when it read, or failed)."""
    if result.error is not None:
        return None
    usage = result.usage
    return cache_miss_reason(usage.cache_read_tokens, usage.cache_write_tokens, result.prompt_tokens, minimum,
                             first_turn=result.history_messages == 0,
                             previous_prompt_tokens=None if previous is None else previous.prompt_tokens)


def render_details(result: TurnResult, label: str, cache_reason: str | None = None) -> None:
    with st.expander(f"What {label} did"):
        render_recall(result.recall)
        render_tool_calls(result.tool_calls)
        if result.jobs:
            st.caption(f"Queued background jobs: {', '.join(map(str, result.jobs))}")
        st.markdown(metrics_table(result))
        if cache_reason:
            st.caption(f"Cache read 0: {cache_reason}")


_IMAGE_OPENER = re.compile(r"!\[")


def literal(text: str) -> str:
    """Markdown as typed, except what would act on its own: `$` (Streamlit would start LaTeX)
    and images. `![p](http://host/pixel.png)` in a message or a reply would make every
    browser showing it fetch that URL (a tracking pixel); with the bracket escaped it reads
    as text, and a bare URL in it stays a link a person may choose to follow. Raw HTML is
    already shown as text (st.markdown without unsafe_allow_html)."""
    return _IMAGE_OPENER.sub(r"!\\[", text.replace("$", "\\$"))


def render_earlier(lines: list[tuple[str, str, str | None]]) -> None:
    """The open conversation as stored, before this browser session's turns."""
    if not lines:
        return
    st.caption("Earlier in this conversation (from the database)")
    for role, text, _model in lines:
        with st.chat_message(role):
            st.markdown(literal(text))


def render_result(result: TurnResult, label: str, noted: list[str] | None = None,
                  cache_reason: str | None = None) -> None:
    """The assistant's side of one turn in one column."""
    with st.chat_message("assistant"):
        if result.error:
            st.error(result.error)
        else:
            st.markdown(literal(result.reply) if result.reply else "_(empty reply)_")
            if result.truncated:
                st.warning(CUT_NOTE, icon="✂️")
            st.caption(f"Model: {result.model_label}")
    for text in noted or []:
        st.info(f"Noted: {md_escape(text)}", icon="📝")
    render_details(result, label, cache_reason)


def changed_knobs(ran_with: Knobs | None, now: Knobs) -> list[str]:
    """The sliders moved since the turn ran, as "label old → new"."""
    if ran_with is None:
        return []
    return [f"{spec.label} {getattr(ran_with, spec.name)} → {getattr(now, spec.name)}"
            for spec in KNOBS if getattr(ran_with, spec.name) != getattr(now, spec.name)]


def render_rescored(backend: MemoryBackend, recall: Recall, ran_with: Knobs | None, knobs: Knobs) -> None:
    """The last message's candidates under the sliders' current values, at once (no new turn).

    Clearly marked: the reply above was written with the notes as they were; these only say
    what the next turn's gate would do with the same candidates.
    """
    changed = changed_knobs(ran_with, knobs)
    if not changed or not recall.notes or recall.skipped_reason is not None:
        return
    rescored = backend.regate(recall, knobs)
    with st.container(border=True):
        st.markdown(f"**Re-scored under the new knobs: {len(rescored.injected)} would be injected, "
                    f"{len(rescored.cut)} cut**")
        st.caption(f"Changed: {'; '.join(changed)}. The model did not see this: the reply above used the notes "
                   "as they were; the next message uses the new knobs. Recency was scored when the turn ran.")
        st.markdown("\n".join(note_line(note) for note in rescored.notes))

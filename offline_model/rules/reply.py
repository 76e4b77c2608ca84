"""Chat replies: a short, deterministic, clearly labelled answer that says which notes it used.

Why: in the lab a person compares what each memory backend put in front of the model. With no
real model, the most useful reply is an honest one: it says it is the offline model and quotes
the notes (injected memory notes, memory-file lines read this turn) it found relevant.
"""

from __future__ import annotations

import re
from typing import Optional

from ..protocol import Request
from .textutil import content_stems

REPLY_PREFIX = "[offline model (rule-based)]"
NOTE_PREFIX_RE = re.compile(r"^\s*(?:\d+\s*\t)?\s*[-*]\s+(?:\[[^\]]*\]\s*)?(?:\((?:semantic|episodic|procedural)\)\s*)?")
MAX_FALLBACK_NOTES = 5
MAX_RELEVANT_NOTES = 3


def clean_note(line: str) -> str:
    """Note text without the list dash, date and kind prefix ('- [2026-12-01] (semantic) X' -> 'X')."""
    return NOTE_PREFIX_RE.sub("", line).strip()


def note_lines(text: str) -> list[str]:
    """Lines of the form '- ...' in a block of text (memory notes), cleaned."""
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*(?:\d+\s*\t)?\s*[-*]\s+\S", line):
            note = clean_note(line)
            if note:
                out.append(note)
    return out


def visible_notes(req: Request) -> list[str]:
    """Notes from visible mid-conversation system messages and <memory_notes> in the system prompt."""
    notes: list[str] = []
    for msg in req.messages:
        if msg.role == "system" and msg.visible:
            notes.extend(note_lines(msg.text()))
    for m in re.finditer(r"<memory_notes>(.*?)</memory_notes>", req.system_text, re.S):
        notes.extend(note_lines(m.group(1)))
    seen: set[str] = set()
    unique = []
    for n in notes:
        if n not in seen:
            seen.add(n)
            unique.append(n)
    return unique


def last_user_text(req: Request) -> str:
    """Text of the last user message that has text (tool_result-only messages skipped)."""
    for msg in reversed(req.messages):
        if msg.role == "user" and msg.text().strip():
            return msg.text()
    return ""


def rank_notes(query: str, notes: list[str]) -> tuple[list[str], bool]:
    """Notes by lexical overlap with the query; (notes, True) if any overlapped, else fallback notes."""
    q = content_stems(query)
    scored = []
    for i, note in enumerate(notes):
        overlap = len(q & content_stems(note))
        if overlap:
            scored.append((-overlap, i, note))
    if scored:
        scored.sort()
        return [n for _, _, n in scored[:MAX_RELEVANT_NOTES]], True
    return notes[:MAX_FALLBACK_NOTES], False


def _shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def reply(req: Request, notes: Optional[list[str]] = None, saved: int = 0) -> str:
    """The chat reply text for ``req`` given the notes it may use."""
    notes = visible_notes(req) if notes is None else notes
    user = last_user_text(req)
    parts = [f"{REPLY_PREFIX} This is the offline model, a rule-based stand-in for Claude, so this reply is canned."]
    is_question = user.strip().endswith("?") or bool(re.match(r"^\s*(what|where|who|when|which|how|do|does|did|am|is|are|can)\b", user, re.I))
    if saved:
        parts.append(f"I saved {saved} note{'s' if saved != 1 else ''} to memory.")
    if not notes:
        parts.append("No notes were provided.")
        return " ".join(parts)
    used, relevant = rank_notes(user, notes)
    if is_question and relevant:
        parts.append(f"From your notes: {used[0]}")
    quoted = "; ".join(f'"{_shorten(n)}"' for n in used)
    parts.append(f"Notes used: {quoted}" + ("" if relevant else " (none matched your message, so all are listed)") + ".")
    return " ".join(parts)

"""Request formats the rules read: the lab's extraction payload and Mem0's additive prompt.

Why separate from the rules: these parse the two callers' wire formats (tags, sections) into
turns and existing memories; the rules never see the formats.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from typing import Optional

from .memory import Turn, reconcile

LAB_TODAY_RE = re.compile(r"<today>\s*(\d{4}-\d{2}-\d{2})\s*</today>")
LAB_EXISTING_RE = re.compile(r"<existing_memories>(.*?)</existing_memories>", re.S)
LAB_TURN_RE = re.compile(r"<(user|assistant)>(.*?)</\1>", re.S)


def _date(value: Optional[str]) -> dt.date:
    try:
        return dt.date.fromisoformat(value) if value else dt.date.today()
    except ValueError:
        return dt.date.today()


def parse_lab_payload(payload: str) -> tuple[dt.date, list[tuple[str, str]], list[Turn]]:
    """Parse the lab's extraction payload (<today>, <existing_memories>, <conversation>)."""
    m = LAB_TODAY_RE.search(payload)
    today = _date(m.group(1) if m else None)
    existing: list[tuple[str, str]] = []
    em = LAB_EXISTING_RE.search(payload)
    if em:
        for line in em.group(1).splitlines():
            lm = re.match(r"^\s*\[([^\]]+)\]\s*(.+?)\s*$", line)
            if lm:
                existing.append((lm.group(1), lm.group(2)))
    convo = payload
    cm = re.search(r"<conversation>(.*)</conversation>", payload, re.S)
    if cm:
        convo = cm.group(1)
    turns = [Turn(t.group(1), html.unescape(t.group(2)) if "&" in t.group(2) and not "&" in html.unescape(t.group(2)) else t.group(2)) for t in LAB_TURN_RE.finditer(convo)]
    return today, existing, turns


def is_mem0_extraction(system: str, user: str) -> bool:
    """Mem0's ADDITIVE_EXTRACTION_PROMPT (stable features of its text) with its user prompt sections."""
    return "Memory Extractor" in system and '"memory"' in system and "attributed_to" in system and "## New Messages" in user


def parse_mem0_prompt(user: str) -> tuple[dt.date, list[tuple[str, str]], list[Turn]]:
    """Parse Mem0's additive-extraction user prompt: '## New Messages' as 'role: content' lines."""
    sections: dict[str, str] = {}
    for m in re.finditer(r"^## ([^\n]+)\n(.*?)(?=^## |^# Output:|\Z)", user, re.S | re.M):
        sections[m.group(1).strip()] = m.group(2).strip()
    today = _date((sections.get("Current Date") or "").strip()[:10] or None)
    existing: list[tuple[str, str]] = []
    try:
        for item in json.loads(sections.get("Existing Memories") or "[]"):
            existing.append((str(item.get("id")), str(item.get("text", ""))))
    except (ValueError, AttributeError):
        pass
    turns: list[Turn] = []
    raw = sections.get("New Messages", "")
    try:  # Mem0 sends a string; a JSON list is also accepted
        as_list = json.loads(raw)
        if isinstance(as_list, list):
            return today, existing, [Turn(str(x.get("role")), str(x.get("content", ""))) for x in as_list if isinstance(x, dict)]
    except ValueError:
        pass
    for line in raw.splitlines():
        m = re.match(r"^(user|assistant|system):\s?(.*)$", line)
        if m:
            turns.append(Turn(m.group(1), m.group(2)))
        elif turns:
            turns[-1].text += "\n" + line
    return today, existing, turns


def mem0_memories(user_prompt: str) -> dict:
    """Mem0's reply shape: {"memory": [{"id", "text", "attributed_to"}]} (ADD-only, user facts only)."""
    today, existing, turns = parse_mem0_prompt(user_prompt)
    ops = reconcile(turns, existing, today)
    items = []
    for op in ops:
        if op.op in ("add", "update"):
            items.append({"id": str(len(items)), "text": op.content, "attributed_to": "user"})
    return {"memory": items}

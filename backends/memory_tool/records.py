"""The agent's files seen as memories: one record per non-empty line.

The Memories page, `stored_texts` and the evals compare backends memory by memory, and
the agent writes one fact per line, so a line is the unit. A record id names the file,
the line number and a hash of the line: a stale id (the agent edited the file since the
page was drawn) still finds its line if it moved, and never deletes a different line.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import timedelta

from core import MemoryRecord
from core.records import FileLocation
from db.models import MemoryFile

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an the my me i i'm im you your our we us about that this those these of to for in on at and or is are was "
    "were be been it its with what everything anything all any know knew remember note notes memory memories "
    "please forget delete remove erase".split()
)


@dataclass(frozen=True)
class LineId:
    file_id: str
    line: int
    digest: str


def line_digest(line: str) -> str:
    return hashlib.sha1(line.encode("utf-8")).hexdigest()[:10]


def record_id(file: MemoryFile, line_number: int, line: str) -> str:
    return f"{file.id}:{line_number}:{line_digest(line)}"


def parse_record_id(memory_id: str) -> LineId | None:
    parts = memory_id.split(":")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return LineId(parts[0], int(parts[1]), parts[2])


def file_records(file: MemoryFile, ttl_days: float) -> list[MemoryRecord]:
    """One record per non-empty line; `expires_at` is when the sweep would drop the file."""
    last_use = max(filter(None, [file.last_read_at, file.updated_at, file.created_at]))
    records = []
    for number, line in enumerate(file.content.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue  # blank lines and markdown headings are structure, not memories
        records.append(MemoryRecord(
            id=record_id(file, number, line), content=line.strip(), kind="file", status="live",
            created_at=file.created_at, last_used_at=file.last_read_at,
            expires_at=last_use + timedelta(days=ttl_days),
            location=FileLocation(path=file.path, line=number, updated_at=file.updated_at),
        ))
    return records


def find_line(lines: list[str], target: LineId) -> int | None:
    """Index of the line a record id names: at its number if unchanged, else wherever it moved."""
    index = target.line - 1
    if 0 <= index < len(lines) and line_digest(lines[index]) == target.digest:
        return index
    moved = [i for i, line in enumerate(lines) if line_digest(line) == target.digest]
    return moved[0] if moved else None


def topic_words(topic: str) -> set[str]:
    return {word for word in _WORD.findall(topic.lower()) if word not in _STOPWORDS}


def line_matches(line: str, words: set[str]) -> bool:
    """A line is about a topic when it holds at least two thirds of the topic's content words
    (all of one or two; prefix match, so 'dog' finds 'dogs'): a line that paraphrases the
    topic still goes, a line sharing one word of a longer topic stays. Markdown headings are
    structure, not memories: never matched."""
    if not words or line.lstrip().startswith("#"):
        return False
    line_words = _WORD.findall(line.lower())
    found = sum(any(candidate.startswith(word) for candidate in line_words) for word in words)
    return found >= math.ceil(2 * len(words) / 3)

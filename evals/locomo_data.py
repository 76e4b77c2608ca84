"""LoCoMo conversations read straight from the shared zip (no copy is ever committed).

LoCoMo (10 long two-speaker conversations, QA with `evidence` turn ids such as "D1:3")
is the public benchmark for long-term conversational memory; its evidence ids let us
score recall through provenance instead of string matching an answer.
"""

from __future__ import annotations

import json
import re
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from settings import REPO_ROOT

DEFAULT_ZIP = REPO_ROOT.parent / "shared" / "data" / "locomo" / "locomo10.zip"
SESSION_KEY = re.compile(r"^session_(\d+)$")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


class Turn(BaseModel):
    dia_id: str
    speaker: str
    text: str


class Session(BaseModel):
    number: int
    started_at: datetime
    turns: list[Turn]


class Question(BaseModel):
    question: str
    answer: str | None = None
    evidence: list[str] = Field(default_factory=list)
    category: int

    def evidence_sessions(self) -> set[int]:
        return {int(match.group(1)) for ref in self.evidence if (match := re.match(r"D(\d+):", ref))}


class Conversation(BaseModel):
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question]


def _turn_text(raw: dict) -> str:
    # Shared photos are part of what a speaker told the other; LoCoMo keeps their caption.
    caption = raw.get("blip_caption")
    return f"{raw['text']} [shares a photo: {caption}]" if caption else raw["text"]


def parse_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=timezone.utc)


def parse_conversation(sample_id: str, data: dict) -> Conversation:
    sessions = []
    for key, turns in data.items():
        match = SESSION_KEY.match(key)
        if match and isinstance(turns, list) and turns:
            sessions.append(Session(
                number=int(match.group(1)), started_at=parse_date(data[f"{key}_date_time"]),
                turns=[Turn(dia_id=t["dia_id"], speaker=t["speaker"], text=_turn_text(t)) for t in turns],
            ))
    questions = [
        Question(question=q["question"], answer=None if q.get("answer") is None else str(q["answer"]),
                 evidence=list(q.get("evidence") or []), category=int(q["category"]))
        for q in data.get("qa", [])
    ]
    return Conversation(sample_id=sample_id, speakers=(data["speaker_a"], data["speaker_b"]),
                        sessions=sorted(sessions, key=lambda s: s.number), questions=questions)


def load_conversation(conversation: int | str, zip_path: Path = DEFAULT_ZIP) -> Conversation:
    """One conversation by its id (26, 30, ...), read from the zip without extracting it."""
    with zipfile.ZipFile(zip_path) as archive:
        names = [name for name in archive.namelist() if name.endswith(f"/{conversation}.json")]
        if not names:
            available = sorted(Path(n).stem for n in archive.namelist() if n.endswith(".json"))
            raise ValueError(f"conversation {conversation} is not in {zip_path} (available: {', '.join(available)})")
        return parse_conversation(str(conversation), json.loads(archive.read(names[0])))

"""Chat replies: one or two plain sentences that use the notes the way an assistant would.

Why: in the lab a person compares what each memory backend put in front of the model; the
reply shows that by using the notes ("Since you're vegetarian ..."), from general templates
keyed by the message's intent (small talk, a question about the user, a recommendation, a
task, another question, a statement). The column's model label says it is the offline model,
so the text carries no disclaimer.
"""

from __future__ import annotations

import re
from typing import Optional

from ..protocol import Request
from . import lexicon
from .memory import parse_memory
from .textutil import content_stems, stem

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


def _note_words(note: str) -> set[str]:
    """A note's content words plus the words a question uses for its kind ('beagle' note -> 'dog', 'pet')."""
    fact = parse_memory(note)
    words = content_stems(note)
    if fact is not None:
        family, *parts = fact.key.split(":")
        words |= content_stems(" ".join(parts)) | {stem(w) for w in lexicon.mapping("topics").get(family, "").split()}
    return words


def rank_notes(query: str, notes: list[str]) -> tuple[list[str], bool]:
    """Notes by overlap with the query (words and kinds); (notes, True) if any overlapped, else fallback notes."""
    q = content_stems(query) | {stem(w) for w in re.findall(r"\b(?:like|love|want)\b", query.lower())}
    scored = []
    for i, note in enumerate(notes):
        overlap = len(q & _note_words(note))
        if overlap:
            scored.append((-overlap, i, note))
    if scored:
        scored.sort()
        return [n for _, _, n in scored[:MAX_RELEVANT_NOTES]], True
    return notes[:MAX_FALLBACK_NOTES], False


SMALL_TALK_RE = re.compile(r"^\W*(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks|thank you|thx|ty|cheers|ok|okay|cool|great|nice|bye|goodbye|lol|haha)\b", re.I)
THANKS_RE = re.compile(r"\b(?:thanks|thank you|thx|ty|cheers)\b", re.I)
RECOMMEND_RE = re.compile(r"\b(?:recommend|suggest|suggestions?|ideas?|tips?|what should i|where should i|which .* should i|any good|how about|what (?:can|could) i|plan|cook|eat|dinner|lunch|breakfast|recipe|restaurant|gift|book|watch|read)\b", re.I)
TASK_RE = re.compile(r"^\W*(?:please\s+)?(?:can you\s+|could you\s+)?(?:write|draft|explain|summari[sz]e|translate|make|create|generate|list|compare|describe|help|fix|review|calculate|give me|tell me|show me)\b", re.I)
ABOUT_ME_RE = re.compile(r"\b(?:(?:do|did|am|have|was|were|where|what|who|when|which)\s+i|my|mine|me)\b", re.I)
ADVICE_RE = re.compile(r"\b(?:should|can|could|shall)\s+i\b|\b(?:recommend|suggest)", re.I)
QUESTION_RE = re.compile(r"^\s*(?:what|where|who|when|which|how|why|do|does|did|am|is|are|can|could|should|would|will|have|has)\b", re.I)
SECOND_PERSON = [(r"^User is\b", "You are"), (r"^User was\b", "You were"), (r"^User has\b", "You have"),
                 (r"^User does not\b", "You do not"), (r"^User doesn't\b", "You don't"), (r"^User's\b", "Your"),
                 (r"^User and\b", "You and"), (r"^User\b", "You")]


def second_person(note: str) -> str:
    """A third-person note addressed to the user ('User lives in Pune.' -> 'You live in Pune.')."""
    text = note.strip()
    if not re.match(r"^User\b", text):
        return text[:1].upper() + text[1:]
    for pattern, repl in SECOND_PERSON:
        if re.match(pattern, text):
            text = re.sub(pattern, repl, text, count=1)
            break
    text = re.sub(r"^You ((?:\w+ly |just |also |still )?)(\w+?)(?:ies)\b", lambda m: f"You {m.group(1)}{m.group(2)}y", text)
    text = re.sub(r"^You ((?:\w+ly |just |also |still )?)(\w+?(?:ch|sh|ss|x|o))es\b", r"You \1\2", text)
    text = re.sub(r"^You ((?:\w+ly |just |also |still )?)(\w+?[^su])s\b", r"You \1\2", text)
    text = re.sub(r"\btheir\b", "your", text)
    text = re.sub(r"\bthemselves\b", "yourself", text)
    text = re.sub(r"\bthem\b", "you", text)
    return re.sub(r"\s*\(as of [^)]*\)", "", text)


def _as_reason(note: str) -> str:
    """A note as a clause to give a reason with: "you're vegetarian", "you avoid peanuts"."""
    text = second_person(note).rstrip(".")
    text = re.sub(r"^You are allergic to\b", "you avoid", text)
    text = re.sub(r"^You are\b", "you're", text)
    text = re.sub(r"^Your\b", "your", text)
    text = re.sub(r"^You\b", "you", text)
    return text


CALLED_RE = re.compile(r"^User wants to be called (?P<name>[^.]{1,40})\.?$")
WRITING_RE = re.compile(r"\b(?:write|draft|compose|sign|note|email|e-mail|letter|message|card|invitation|reply)\b", re.I)


def preferred_name(notes: list[str]) -> Optional[str]:
    """The name the user asked to be called, from a standing-instruction note."""
    for note in notes:
        m = CALLED_RE.match(note.strip())
        if m:
            return m["name"].strip()
    return None


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def intent(text: str) -> str:
    """What the message asks for: small_talk, about_user, recommendation, task, question, statement."""
    t = text.strip()
    is_question = t.endswith("?") or bool(QUESTION_RE.match(t))
    if SMALL_TALK_RE.match(t) and len(t.split()) <= 8:
        return "small_talk"
    if is_question and ABOUT_ME_RE.search(t) and not ADVICE_RE.search(t):
        return "about_user"
    if RECOMMEND_RE.search(t) and (is_question or TASK_RE.match(t) or re.search(r"\b(?:recommend|suggest)", t, re.I)):
        return "recommendation"
    if TASK_RE.match(t):
        return "task"
    return "question" if is_question else "statement"


def reply(req: Request, notes: Optional[list[str]] = None, saved: int = 0) -> str:
    """One or two plain sentences that answer the last user message using the notes it was given."""
    notes = visible_notes(req) if notes is None else notes
    user = last_user_text(req)
    kind = intent(user)
    used, relevant = rank_notes(user, notes) if notes else ([], False)
    noted = " I'll remember that." if saved else ""
    if kind == "small_talk":
        return ("You're welcome!" if THANKS_RE.search(user) else "Hi! What can I help you with today?") + noted
    if kind == "about_user":
        if not used:
            return "I don't have anything noted about that yet; tell me and I'll remember it."
        answer = " ".join(second_person(n).rstrip(".") + "." for n in used[:2])
        return answer if relevant else f"I'm not sure, but here's what I have noted: {answer}"
    reasons = [_as_reason(n) for n in (used if relevant else notes)[:2]]
    if kind == "recommendation":
        if reasons:
            return f"Since {_join(reasons)}, how about a few options that fit that? Tell me a little more and I'll narrow them down."
        return "Happy to suggest a few options. What do you have in mind, and is there anything you avoid?"
    if kind == "task":
        lead = "Sure, I can help with that"
        name = preferred_name(notes) if WRITING_RE.search(user) else None
        signed = f" I've signed it \"{name}\", as you like to be called." if name else ""
        if reasons and relevant:
            return f"{lead}, keeping in mind that {_join(reasons)}.{signed}"
        return f"{lead}. Here's a first take, and tell me what to change.{signed}"
    if kind == "question":
        if reasons and relevant:
            return f"Good question. Given that {_join(reasons)}, I'd start from that; what matters most to you here?"
        return "Good question. I can't look things up right now, but I'm happy to think it through with you."
    return ("Got it, thanks for telling me." + noted) if saved or not reasons else f"Got it. I'll keep in mind that {_join(reasons)}."

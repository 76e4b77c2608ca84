"""A memory in the user's own voice, for embedding: "User's son plays chess" -> "My son plays chess".

Memories are written in the third person ("User lives in Pune.") so they read as notes
about someone; messages are written in the first person ("where do I live these days?").
A sentence embedder puts "User lives in Pune." far from that question, mostly because of
the person: in the user's voice ("I live in Pune.") the same fact is much closer to how
the user will ask about it. Only the embedding sees this form; the stored content stays
the note the lab shows. The rules are the English person/verb agreement of the subject,
nothing topical.
"""

from __future__ import annotations

import re

_IRREGULAR = {"is": "am", "was": "was", "has": "have", "does": "do", "goes": "go", "isn't": "am not",
              "doesn't": "don't", "hasn't": "haven't", "wasn't": "wasn't", "says": "say"}
_ES_ENDINGS = ("ches", "shes", "sses", "xes", "zzes", "oes")
_PRONOUNS = ((re.compile(r"\btheir\b", re.I), "my"), (re.compile(r"\bthemselves\b", re.I), "myself"),
             (re.compile(r"\bthey(?:'re| are)\b", re.I), "I am"), (re.compile(r"\bthey\b", re.I), "I"),
             (re.compile(r"\bthem\b", re.I), "me"), (re.compile(r"\b[Tt]he user's\b|\bUser's\b"), "my"),
             (re.compile(r"\b[Tt]he user\b|\bUser\b"), "me"))
_SUBJECT = re.compile(r"^\s*(?:The user|User)(?P<possessive>'s)?\s+(?P<rest>.*)$", re.S)


def first_person_verb(verb: str) -> str:
    """The first-person present of a third-person verb: plays -> play, studies -> study."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return verb[:-3] + "y"
    if lower.endswith(_ES_ENDINGS):
        return verb[:-2]
    if lower.endswith("s") and not lower.endswith("ss") and len(lower) > 2:
        return verb[:-1]
    return verb  # past tense and modals agree with every person


def in_user_voice(content: str) -> str:
    """The memory as the user would say it; text without a "User" subject is kept as is."""
    match = _SUBJECT.match(content)
    if match is None:
        return content
    rest = match.group("rest")
    if match.group("possessive"):
        sentence = "My " + rest
    else:
        verb, _, tail = rest.partition(" ")
        sentence = f"I {first_person_verb(verb)} {tail}".rstrip()
    for pattern, replacement in _PRONOUNS:
        sentence = pattern.sub(replacement, sentence)
    return sentence

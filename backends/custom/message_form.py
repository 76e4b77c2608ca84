"""Whether a message is about its sender: the one fact about the message's form recall uses.

Most messages that need no memory are questions asked of the world ("what's the
difference between X and Y?"), and they look like memory-worthy messages to an embedding
because they share a topic with a memory. What tells them apart is grammatical, not
topical: a message about the sender says "I", "my", "we", names a relative the way only
family does ("grandma wants ..."), asks the assistant to do something for them ("suggest
...", "plan ...", "any ideas for ..."), or is anchored in their here and now ("tonight"). The word lists are data (`lexicon/personal.yaml`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

LEXICON = Path(__file__).parent / "lexicon" / "personal.yaml"
_WORD = re.compile(r"[a-zà-ÿ']+")


@dataclass(frozen=True)
class PersonalWords:
    self_words: frozenset[str]
    requests: frozenset[str]
    relations: frozenset[str]
    wants: frozenset[str]
    deixis: frozenset[str]


@functools.lru_cache(maxsize=1)
def personal_words(path: Path = LEXICON) -> PersonalWords:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return PersonalWords(*(frozenset(str(word).lower() for word in data[key]) for key in ("self", "requests", "relations", "wants", "deixis")))


def is_personal(text: str) -> bool:
    """True when the message speaks of its sender, their people, or asks for something for them."""
    lexicon = personal_words()
    words = _WORD.findall(text.lower().replace("’", "'"))
    if not words:
        return False
    first_clause_verbs = {word for word in words[:3]}  # "please suggest", "can you plan", "ok write"
    return bool(
        lexicon.self_words.intersection(words)
        or lexicon.relations.intersection(words)
        or lexicon.wants.intersection(words)
        or lexicon.deixis.intersection(words)
        or lexicon.requests.intersection(first_clause_verbs)
    )

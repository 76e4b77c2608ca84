"""Secrets are never stored: a sentence that names or contains one yields no fact.

Why its own module: both the extractor and the memory-tool agent must refuse the same things.
The words that name a secret are the lab's own list (core/lexicon/secret_words.txt, read as
data: the offline model imports no app package), so the emulator refuses what the lab's
write paths would refuse anyway; the value shapes below are the model's own judgment.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

SECRET_WORDS = Path(__file__).resolve().parents[2] / "core" / "lexicon" / "secret_words.txt"
LONG_DIGITS_RE = re.compile(r"(?:\d[ -]?){9,}")
KEYLIKE_RE = re.compile(r"\b(?:sk|pk|rk|ghp|gho|xox[abp]|AKIA)[-_A-Za-z0-9]{8,}|\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}\b")
CODE_NUMBER_RE = re.compile(
    r"\b(?:code|combination|combo)s?\b(?:[^.!?\n]{0,40}?\b(?:is|was|are|=)|\s*[:=#-]?)\s*[\"']?\d{3,8}(?![.,:/-]?\d)"
    r"|\b\d{3,8}\s+(?:is|was)\s+(?:the|my|our)\s+(?:[\w-]+\s+){0,2}(?:code|combination)s?\b", re.I)
"""A number given as a code ("the code for the shed is 4417"), not a year next to "code"."""
EXTRA_WORDS = ("login", "credentials", "passport", "driver's license", "license number", "id number", "bank details")
"""Named by the model's own caution, beyond the lab's list."""


@cache
def _secret_re() -> re.Pattern[str]:
    lines = SECRET_WORDS.read_text(encoding="utf-8").splitlines()
    entries = {line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")} | set(EXTRA_WORDS)
    alternatives = (r"[\s_-]?".join(re.escape(word).replace("'", "['\u2019]?") for word in entry.split()) + "s?"
                    for entry in sorted(entries, key=len, reverse=True))
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?![\w-])", re.I)


def is_secret(sentence: str) -> bool:
    """Whether a sentence mentions or contains a secret (passwords, codes, keys, card/ID numbers, long digit runs)."""
    return bool(_secret_re().search(sentence) or CODE_NUMBER_RE.search(sentence) or LONG_DIGITS_RE.search(sentence)
                or KEYLIKE_RE.search(sentence))

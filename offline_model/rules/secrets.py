"""Secrets are never stored: a sentence that names or contains one yields no fact.

Why its own module: both the extractor and the memory-tool agent must refuse the same things.
"""

from __future__ import annotations

import re

SECRET_RE = re.compile(
    r"\b(pass(?:word|code|phrase)s?|pwd|pins?|pin ?code|api[ -]?keys?|access[ -]?(?:keys?|tokens?|codes?)|"
    r"secret[ -]?keys?|private[ -]?keys?|auth(?:entication)?[ -]?(?:tokens?|codes?)|tokens?|"
    r"credit[ -]?cards?|debit[ -]?cards?|card (?:number|no)|cvv|cvc|security codes?|verification codes?|"
    r"one[- ]time (?:code|password)|otp|bank (?:account|details)|account (?:number|no)|routing number|"
    r"sort code|iban|swift|ssn|social security|passport|driver'?s? licen[cs]e|licen[cs]e number|"
    r"national id|id number|tax id|seed phrase|recovery phrase|2fa|mfa|login|credentials?)\b",
    re.I,
)
LONG_DIGITS_RE = re.compile(r"(?:\d[ -]?){9,}")
KEYLIKE_RE = re.compile(r"\b(?:sk|pk|rk|ghp|gho|xox[abp]|AKIA)[-_A-Za-z0-9]{8,}|\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}\b")


def is_secret(sentence: str) -> bool:
    """Whether a sentence mentions or contains a secret (passwords, keys, card/ID numbers, long digit runs)."""
    return bool(SECRET_RE.search(sentence) or LONG_DIGITS_RE.search(sentence) or KEYLIKE_RE.search(sentence))

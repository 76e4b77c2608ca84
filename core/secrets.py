"""The lab's secret detector: what no memory, memory file, Mem0 store, job or log may hold.

One detector for every write path (the custom pipeline's extraction checks, the text that
reaches Mem0, the memory tool's file writes), so "a secret" means the same thing in every
column. Two kinds of evidence:

- a word that names a secret (`core/lexicon/secret_words.txt`: password, PIN, door code,
  API key, IBAN, ...): conservative on purpose, "my door code is 9978" holds a secret
  although 9978 alone is an ordinary number; a false positive loses one memory, a false
  negative stores a credential that is re-injected into every later prompt;
- a number next to "code" ("the code for the shed is 4417");
- a value shaped like one: a Luhn-valid card number, an IBAN passing mod-97, a known API-key
  prefix (sk-, ghp_, AKIA, ...), a JWT, a PEM private key, a long random-looking token, a run
  of ten or more digits, an SSN.

Hand-written because no library in requirements covers this mix (detect-secrets and the
like scan source files for keys, not chat for door codes); the checksums are there so
ordinary numbers ("I ran 10 km", "born in 2019") are not flagged. The offline model keeps
its own copy of the rule (it may import nothing of the lab) but reads the same word list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LEXICON = Path(__file__).with_name("lexicon") / "secret_words.txt"
REDACTED = "[redacted]"
"""What replaces a sentence holding a secret in text handed to a library that stores it."""

SSN_RE = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
LONG_DIGITS_RE = re.compile(r"(?:\d[ -]?){9,}\d")
"""Ten or more digits (spaces/dashes allowed): phone, card, account and ID numbers alike."""
CARD_CANDIDATE_RE = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)\b")
KEY_PREFIX_RE = re.compile(
    r"\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_]|ant[-_]|proj[-_])?[A-Za-z0-9_-]{8,}"
    r"|\b(?:ghp|gho|ghs|ghu|ghr|github_pat|glpat|xox[abprs])[-_][A-Za-z0-9_-]{8,}"
    r"|\b(?:AKIA|ASIA)[A-Z0-9]{12,}\b|\bAIza[0-9A-Za-z_-]{20,}"
)
JWT_RE = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
PEM_RE = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
RANDOM_TOKEN_RE = re.compile(r"(?<![\w/+=-])(?=[A-Za-z0-9_+/=-]*\d)(?=[A-Za-z0-9_+/=-]*[A-Za-z])[A-Za-z0-9_+/=-]{24,}")
"""Long mixed letter+digit strings: how generated keys and tokens look (words never do)."""
CODE_NUMBER_RE = re.compile(
    r"\b(?:code|combination|combo)s?\b(?:[^.!?\n]{0,40}?\b(?:is|was|are|=)|\s*[:=#-]?)\s*[\"']?\d{3,8}(?![.,:/-]?\d)"
    r"|(?<![\d.,:/-])\d{3,8}\s+(?:is|was)\s+(?:the|my|our)\s+(?:[\w-]+\s+){0,2}(?:code|combination)s?\b",
    re.IGNORECASE)
"""A number next to "code" ("the code for the front door is 4417"): a code that opens something."""
SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+|\n+")


def _entry_pattern(entry: str) -> str:
    words = [re.escape(word).replace("'", "['\u2019]?") for word in entry.split()]
    return r"[\s_-]?".join(words) + "s?"


@cache
def secret_words_re() -> re.Pattern[str]:
    """The lexicon as one whole-word regex, longest entry first."""
    lines = LEXICON.read_text(encoding="utf-8").splitlines()
    entries = sorted({line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")},
                     key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(_entry_pattern(entry) for entry in entries) + r")(?![\w-])",
                      re.IGNORECASE)


def luhn_valid(digits: str) -> bool:
    """The card-number checksum: separates card numbers from other long numbers."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(candidate: str) -> bool:
    """ISO 13616 mod-97 check: moves the country code to the end, letters become 10..35."""
    compact = candidate.replace(" ", "")
    if len(compact) < 15 or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    numeric = "".join(str(int(char, 36)) for char in rearranged)
    return int(numeric) % 97 == 1


def _has_card_number(text: str) -> bool:
    for match in CARD_CANDIDATE_RE.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            return True
    return False


def _has_iban(text: str) -> bool:
    return any(iban_valid(match.group(0)) for match in IBAN_RE.finditer(text.upper()))


def secret_reason(text: str) -> str | None:
    """Why this text looks like it carries a secret, or None when it does not."""
    if not text:
        return None
    checks = (
        ("secret keyword", lambda: secret_words_re().search(text)),
        ("access code", lambda: CODE_NUMBER_RE.search(text)),
        ("card number", lambda: _has_card_number(text)),
        ("IBAN", lambda: _has_iban(text)),
        ("SSN", lambda: SSN_RE.search(text)),
        ("long digit run", lambda: LONG_DIGITS_RE.search(text)),
        ("API key", lambda: KEY_PREFIX_RE.search(text) or JWT_RE.search(text) or PEM_RE.search(text)),
        ("token-like string", lambda: RANDOM_TOKEN_RE.search(text)),
    )
    return next((reason for reason, check in checks if check()), None)


def contains_secret(*texts: str) -> bool:
    return any(secret_reason(text) is not None for text in texts if text)


@dataclass(frozen=True)
class Redaction:
    text: str
    reasons: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.reasons)


def redact(text: str) -> Redaction:
    """The text with every sentence that holds a secret replaced by REDACTED.

    Whole sentences, not just the value: "my door code is 9978" has no secret-shaped span,
    and a library that extracts facts should not learn "User has a door code [redacted]".
    A sentence that names a secret also takes the next one with it ("What's my password?
    It's hunter2."), since the value often follows its name.
    """
    pieces = SENTENCE_END_RE.split(text)
    out: list[str] = []
    reasons: list[str] = []
    carry = False
    for piece in pieces:
        reason = secret_reason(piece)
        if reason is None and carry and piece.strip():
            reason = "follows a secret's name"
        carry = reason in ("secret keyword", "access code")
        if reason is not None:
            reasons.append(reason)
            if not out or out[-1] != REDACTED:
                out.append(REDACTED)
        else:
            out.append(piece)
    return Redaction(" ".join(part for part in out if part), tuple(reasons)) if reasons else Redaction(text)

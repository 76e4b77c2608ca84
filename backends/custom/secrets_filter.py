"""A code-level secret check applied to every extracted operation.

The extraction prompt already forbids storing secrets, but a prompt is a request, not a
guarantee: a model can still copy "my PIN is 4921" into a memory. Memories are re-injected
into later prompts and shown on screen, so a stored secret leaks again and again. This
check is deliberately conservative (a false positive loses one memory; a false negative
stores a credential) and runs on both the content and the evidence of each operation.

Hand-written because no library in requirements covers this mix; the number checks (Luhn,
IBAN mod-97) are there so ordinary numbers ("I ran 10 km") are not flagged.
"""

from __future__ import annotations

import re

SECRET_WORDS_RE = re.compile(
    r"\b(pass(?:word|code|phrase)s?|pwd|pins?|pin[ -]?codes?|api[ -_]?keys?|secret[ -_]?keys?|private[ -_]?keys?|"
    r"access[ -_]?(?:keys?|tokens?)|auth(?:entication)?[ -_]?(?:tokens?|codes?)|bearer|(?:session|refresh|api) tokens?|"
    r"tokens?|credentials?|cvv|cvc|security codes?|verification codes?|one[- ]time (?:codes?|passwords?)|otp|2fa|mfa|"
    r"seed phrase|recovery (?:phrase|codes?)|mnemonic phrase|"
    r"credit[ -]?cards?|debit[ -]?cards?|card (?:numbers?|no\.?)|bank account|account (?:numbers?|no\.?)|"
    r"routing numbers?|sort codes?|iban|swift|bic|ssn|social security|passport (?:numbers?|no\.?)|"
    r"driver'?s? licen[cs]e (?:numbers?|no\.?)|national id|tax id|tin number)\b",
    re.IGNORECASE,
)
SSN_RE = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
LONG_DIGITS_RE = re.compile(r"(?:\d[ -]?){9,}\d")
"""Ten or more digits (spaces/dashes allowed): phone, card, account and ID numbers alike."""
CARD_CANDIDATE_RE = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")
IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)\b")
KEY_PREFIX_RE = re.compile(r"\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_]|ant[-_]|proj[-_])?[A-Za-z0-9_-]{8,}|\b(?:ghp|gho|ghs|xox[abpr])[-_][A-Za-z0-9-]{8,}|\bAKIA[A-Z0-9]{12,}\b")
JWT_RE = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
RANDOM_TOKEN_RE = re.compile(r"\b(?=[A-Za-z0-9_+/=-]*\d)(?=[A-Za-z0-9_+/=-]*[A-Za-z])[A-Za-z0-9_+/=-]{24,}\b")
"""Long mixed letter+digit strings: how generated keys and tokens look (words never do)."""


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
    rearranged = compact[4:] + compact[:4]
    numeric = "".join(str(int(char, 36)) for char in rearranged)
    return len(compact) >= 15 and int(numeric) % 97 == 1


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
    checks = (
        ("secret keyword", SECRET_WORDS_RE.search(text)),
        ("card number", _has_card_number(text)),
        ("IBAN", _has_iban(text)),
        ("SSN", SSN_RE.search(text)),
        ("long digit run", LONG_DIGITS_RE.search(text)),
        ("API key", KEY_PREFIX_RE.search(text) or JWT_RE.search(text)),
        ("token-like string", RANDOM_TOKEN_RE.search(text)),
    )
    return next((reason for reason, hit in checks if hit), None)


def contains_secret(*texts: str) -> bool:
    return any(secret_reason(text) is not None for text in texts if text)

"""A clause of the user's, rewritten in the third person: "I mostly write Rust at work" ->
"User mostly writes Rust at work."

Why rewrite rather than fill a template per fact: the user's own qualifiers (night shifts,
type 1, at Spotify) are what makes a memory useful, and a general rewrite keeps them for every
predicate, including ones no template foresaw. Predicates with a canonical form (diet,
residence, pets, family names) build their content themselves.
"""

from __future__ import annotations

import re
import unicodedata

from .clause import Clause, Token, third_singular

FIRST_TO_THIRD = {"my": "their", "me": "them", "mine": "theirs", "myself": "themselves", "i": "they",
                  "we": "they", "our": "their", "us": "them", "ours": "theirs", "ourselves": "themselves"}
TRAILING_RE = re.compile(
    r"(?:[\s,;:.!-]+(?:lol|lmao|haha+|hehe|btw|by the way|fwiw|fyi|tbh|though|too|as well|if that matters|"
    r"for what it's worth|just so you know|for context|right now|at the moment|either)|[\s,;:.!?-]+|\s*\(\s*\))+$",
    re.I,
)


def clean(text: str) -> str:
    """Remove emoji and masked characters, collapse spaces, trim trailing fillers and punctuation."""
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("So", "Sk", "Cs", "Co") and ch != "\u2591")
    text = re.sub(r"\s+", " ", text).strip()
    prev = None
    while prev != text:
        prev = text
        text = TRAILING_RE.sub("", text).strip()
    return text


def subject_phrase(c: Clause) -> str:
    """The subject in the third person: 'User', "User's son Leo", 'User and their husband Tom'."""
    if c.subject in ("i", "we", "implicit"):
        return "User"
    words = " ".join(_swap(t) for t in c.subject_tokens).replace(" 's", "'s")
    if c.subject == "with":
        return "User and " + words
    if c.subject == "my":
        return "User's " + re.sub(r"^their\s+", "", words)
    if c.subject == "pronoun":
        return "User's " + (c.head or "partner") + (f" {c.name}" if c.name else "")
    return words


def _swap(tok: Token) -> str:
    low = tok.low
    if low in FIRST_TO_THIRD and not (low == "us" and tok.text == "US"):
        return FIRST_TO_THIRD[low]
    return tok.text


FOCUS = {"also", "still", "actually", "really", "just", "genuinely", "truly", "honestly", "definitely", "totally"}
SKIP = {"not", "n't", "never", "also", "still", "just", "really", "mostly", "actually", "now", "currently",
        "genuinely", "basically", "always", "usually", "often", "finally", "recently", "already", "only"}


def _conjugate(c: Clause, index: int, tok: Token) -> str:
    """The third-person singular form of the first word of the verb group ('am' -> 'is', 'write' -> 'writes')."""
    low = tok.low
    if low in ("'m", "am", "'re", "are"):
        return "is"
    if low == "were":
        return "was"
    if low in ("'ve", "have"):
        return "has"
    if low == "do":
        return "does"
    if tok is c.verb and c.tense == "present" and not c.progressive and c.modal is None and low == c.verb_lemma:
        return third_singular(low)
    return _contraction(c, index, tok)


def _contraction(c: Clause, index: int, tok: Token) -> str:
    low = tok.low
    if low == "'d":
        nxt = c.tokens[index + 1].low if index + 1 < len(c.tokens) else ""
        return "had" if nxt == "been" else "would"
    singular = c.subject in ("i", "we", "implicit")
    return {"'ll": "will", "'ve": "have", "'m": "am", "'re": "is" if singular else "are", "'s": "is"}.get(low, _swap(tok))


def rewrite(c: Clause, from_index: int | None = None, to_index: int | None = None, subject: str | None = None) -> str:
    """Third-person statement of the clause (or of its tokens from_index..to_index)."""
    start = c.vp_start if from_index is None else from_index
    end = len(c.tokens) if to_index is None else to_index
    singular = c.subject in ("i", "we", "implicit")
    out = subject if subject is not None else subject_phrase(c)
    pending = singular and subject is None
    if c.subject == "implicit" and c.progressive and start < len(c.tokens) and c.tokens[start] is c.verb:
        out, pending = out + " is", False  # "Working as a barista" -> "User is working as a barista"
    prev_end = None
    for index in range(start, end):
        tok = c.tokens[index]
        gap = " " if prev_end is None else c.text[prev_end - c.start:tok.start - c.start]
        if index < c.rest_start and tok.low in FOCUS and tok is not c.verb:
            continue
        if pending and tok.low not in SKIP:
            word, pending = _conjugate(c, index, tok), False
        elif index < c.rest_start:
            word = _contraction(c, index, tok)
        else:
            word = _swap(tok)
        if c.subject == "implicit" and tok is c.verb:
            word = word.lower()
        if tok.text.startswith("'") and not word.startswith("'"):
            gap = " "
        out += gap + word
        prev_end = tok.end
    text = clean(out)
    return text[:1].upper() + text[1:] + "." if text else ""

"""From a user turn to clauses: the user's own words only, cut into sentences, then into
clauses and coordinated predicates.

Why first: everything after this step assumes it reads the user speaking for themselves.
Quoted text, pasted text (after "here's the email:", header lines, ``>`` lines, code fences),
and whatever follows a colon that does not label the user's own note are masked out, so no
predicate ever sees them. Offsets stay those of the original text (evidence is a substring).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import lexicon

QUOTE_MASK = "\u2591"  # what quoted or pasted characters become: never a word character
HEADER_LINE_RE = re.compile(r"^\s*(?:from|to|subject|date|cc|bcc|sent|reply-to|re|fwd)\s*:", re.I | re.M)
FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.S)
FORWARD_RE = re.compile(r"-{2,}\s*(?:forwarded|original) message|begin forwarded message", re.I)
OPEN_QUOTE_RE = re.compile(r"(?:(?<=^)|(?<=[\s:(\[]))(['\"])(?=\S)")
REPORTING_RE = re.compile(
    r"\b(?:wrote|writes|said|says|told me|sent|texted|emailed|messaged|posted|heard|email|e-mail|message|text|"
    r"letter|review|post|comment|quote|joke|one|lyrics?|poem|transcript|document|doc|note from|thread|article|"
    r"prompt|example|template|draft)\b",
    re.I,
)
SENTENCE_RE = re.compile(r"[^.!?\n]+(?:[.!?]+|\.\.\.|…|$)")
FIRST_PERSON_START_RE = re.compile(r"^\s*(?:i|i'm|im|i've|ive|my|we|we're|our)\b", re.I)


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    question: bool  # ends with a question mark


def _mask(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = QUOTE_MASK


def _mask_quotes(text: str, chars: list[str]) -> None:
    """Mask paired quotations ('...' or "...") of two or more words; apostrophes are left alone."""
    pos = 0
    while True:
        m = OPEN_QUOTE_RE.search(text, pos)
        if not m:
            return
        q = m.group(1)
        close = re.compile(re.escape(q) + r"(?=[\s.,!?;:)\]]|$)").search(text, m.end())
        if not close or " " not in text[m.end():close.start()]:
            pos = m.end()
            continue
        _mask(chars, m.start(), close.end())
        pos = close.end()


def _lead_labels_own_note(lead: str) -> bool:
    """Whether the words before a colon label the user's own statement ('quick note:')."""
    words = re.sub(r"[^\w\s'.-]", " ", lead).strip().lower()
    if words in lexicon.words("note_labels") or words in lexicon.words("fillers"):
        return True
    openers = lexicon.words("fillers") | lexicon.words("self_corrections")
    fillers = "|".join(re.escape(f) for f in sorted(openers, key=len, reverse=True))
    lead = re.sub(rf"^(?:(?:{fillers})\b[\s,]*)+", "", lead.strip(), flags=re.I)
    own_correction = re.search(r"\b(?:wrong|mistake|incorrect|correction|correct that)\b", lead, re.I)
    return bool(FIRST_PERSON_START_RE.match(lead)) and (own_correction or not REPORTING_RE.search(lead)) and len(words.split()) <= 12


def _mask_after_colons(text: str, chars: list[str]) -> None:
    """Text after a colon that does not introduce the user's own note is someone else's words."""
    for m in re.finditer(r":(?=\s|$)", text):
        if chars[m.start()] == QUOTE_MASK:
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        sentence_start = max(line_start, max((text.rfind(p, line_start, m.start()) + 1 for p in ".!?"), default=0))
        lead = text[sentence_start:m.start()]
        if re.search(r"\d$", lead) and re.match(r":\d", text[m.start():m.start() + 2]):
            continue  # a clock time
        if _lead_labels_own_note(lead):
            continue
        block_end = text.find("\n\n", m.end())
        _mask(chars, m.start(), len(text) if block_end < 0 else block_end)
        return


def own_words(text: str) -> str:
    """``text`` with everything that is not the user's own words masked (same length)."""
    chars = list(text)
    for m in FENCE_RE.finditer(text):
        _mask(chars, m.start(), m.end())
    cut = min([m.start() for m in (HEADER_LINE_RE.search(text), FORWARD_RE.search(text)) if m] or [len(text)])
    _mask(chars, cut, len(text))
    pos = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith((">", "|")):
            _mask(chars, pos, pos + len(line))
        pos += len(line)
    _mask_quotes(text, chars)
    _mask_after_colons("".join(chars), chars)
    return "".join(chars)


def sentences(text: str) -> list[Sentence]:
    """Sentences of (masked) text, split at . ! ? ... and newlines."""
    out = []
    for m in SENTENCE_RE.finditer(text):
        s, e = m.start(), m.end()
        while s < e and (text[s].isspace() or text[s] in ".…"):
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append(Sentence(s, e, text[s:e].rstrip().endswith("?")))
    return out


BOUNDARY_RE = re.compile(
    r"\s*;\s*|\s*:\s+|\s+[-–—]+\s+|,\s*(?:(?P<c1>and|but|so|which|because|though|although|if|plus|or|while|when)\s+)?|"
    r"\s+(?P<c2>and|but|so|because|if|though|although|which|unless)\s+",
    re.I,
)
ALWAYS_SPLIT = {"so", "which", "because", "though", "although", "if", "unless"}
SO_NOT_CONJ = {"much", "many", "far", "long", "good", "glad", "happy", "sorry", "excited", "tired"}
CLAUSE_OPENERS = {"i", "i'm", "im", "i've", "ive", "i'd", "i'll", "we", "we're", "we've", "he", "she", "they", "he's",
                  "she's", "they're", "it", "it's", "that's", "there's", "my", "our", "you", "what", "how", "why",
                  "where", "when", "who", "can", "could", "would", "will", "please", "any", "is", "are", "do", "does",
                  "wait", "no", "actually", "turns", "btw"}


@dataclass(frozen=True)
class Part:
    start: int
    end: int
    conj: str  # the conjunction before it ("" for the first)


def _opens_clause(words: list[str], conj: str) -> bool:
    """Whether the words after a comma or conjunction start a new clause (or a coordinated predicate)."""
    from .clause import is_past_form, is_verb_form

    if not words:
        return False
    first = words[0]
    if first in ("my", "our"):
        return any(is_verb_form(w) or w in ("is", "are", "was", "'s", "has") for w in words[1:6])
    if first in CLAUSE_OPENERS or is_past_form(first) or first in lexicon.words("self_corrections"):
        return True
    if conj in ("and", "but", "or", ""):
        if conj and is_verb_form(first):
            return True
        if first in ("allergic", "intolerant", "based", "married", "engaged", "pregnant", "from"):
            return True
        if first in lexicon.words("diets") or first in lexicon.words("conditions"):
            return conj != ""
    return False


def parts(text: str, sentence: Sentence) -> list[Part]:
    """Clauses of one sentence: split at ; dashes and conjunctions that open a new clause."""
    out: list[Part] = []
    start, conj = sentence.start, ""
    seg = text[sentence.start:sentence.end]
    for m in BOUNDARY_RE.finditer(seg):
        word = (m.group("c1") or m.group("c2") or "").lower()
        after = re.findall(r"[\w']+", seg[m.end():].lower())[:6]
        left = seg[start - sentence.start:m.start()]
        if not left.strip() or left.strip(" ,").lower() in lexicon.words("fillers"):
            continue  # a lone opener ("Sorry, ...") stays with its clause
        hard = m.group(0).strip()[:1] in (";", ":", "-", "–", "—")
        split = hard or (word in ALWAYS_SPLIT and not (word == "so" and after and after[0] in SO_NOT_CONJ))
        if not split:
            split = _opens_clause(after, word) and not _compound_subject(left, after)
        if split:
            out.append(Part(start, sentence.start + m.start(), conj))
            start, conj = sentence.start + m.end(), word
    out.append(Part(start, sentence.end, conj))
    return [p for p in out if text[p.start:p.end].strip(" ,.!?")]


def _compound_subject(left: str, after: list[str]) -> bool:
    """'My husband Tom and I ...', 'Sam and I ...': the 'and I' belongs to the subject."""
    from .clause import is_verb_form

    if not after or after[0] not in ("i", "me"):
        return False
    words = re.findall(r"[\w']+", left.split(":")[-1].lower())
    words = [w for w in words if w not in lexicon.words("fillers")]
    return 0 < len(words) <= 4 and not any(is_verb_form(w) for w in words[1:]) and not set(words) & {"i", "i'm", "im", "we", "we're"}

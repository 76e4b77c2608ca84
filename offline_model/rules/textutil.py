"""Small text helpers shared by the rule modules (tokenising, stemming, sentence spans).

Why separate: extraction, chat ranking and the memory agent must tokenise and stem the same way,
or a note found relevant by one would be missed by another.
"""

from __future__ import annotations

import re
from typing import Iterator

STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at for from by with about into over under as is am are was were
    be been being do does did doing have has had having i me my mine myself you your yours we our us they them their
    he she it its his her this that these those what which who whom whose when where why how there here not no
    yes can could would should will shall may might must just also too very really please thanks thank hi hello hey
    user users assistant tell know want like s t don didn doesn isn aren wasn im ive id ill re ve ll d m any some all
    one more most much many other such only own same than now out up down off again further once""".split()
)

WORD_RE = re.compile(r"[a-z0-9]+")


def normalise_quotes(text: str) -> str:
    """Map typographic apostrophes/quotes to ASCII without changing string length (offsets stay valid)."""
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')


def stem(word: str) -> str:
    """A light stemmer: enough for 'lives'/'living'/'live' and 'cats'/'cat' to meet."""
    w = word.lower()
    for suffix in ("ingly", "ing", "edly", "ed", "ies", "es", "s", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def content_stems(text: str) -> set[str]:
    """Stemmed content words of ``text`` (stopwords removed)."""
    return {stem(w) for w in WORD_RE.findall(normalise_quotes(text).lower()) if w not in STOPWORDS}


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) spans of sentences in text[start:end], split at . ! ? ; and newlines."""
    end = len(text) if end is None else end
    for m in re.finditer(r"[^.!?;\n]+[.!?]*", text[start:end]):
        s, e = m.start() + start, m.end() + start
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            yield s, e

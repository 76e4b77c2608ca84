"""Word lists of the rules, read from the data files in ``lexicon/``.

Why data files: a list of foods, jobs or animals is knowledge about English, not logic; kept as
text (one entry a line, ``#`` comments stating its scope) it can grow without touching code,
and code never names a particular sentence's words.

Format of a line: ``entry`` or ``entry = canonical`` (a synonym, plural or breed mapped onto the
form written in memories). ``transitions.txt`` lines read ``events => ended states``.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

LEXICON_DIR = Path(__file__).with_name("lexicon")


def _lines(name: str) -> list[str]:
    text = (LEXICON_DIR / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@cache
def mapping(name: str) -> dict[str, str]:
    """entry -> canonical (an entry without '= canonical' maps to itself), lower-case keys."""
    out: dict[str, str] = {}
    for line in _lines(name + ".txt"):
        entry, _, canonical = line.partition(" = ")
        out[entry.strip().lower()] = (canonical or entry).strip()
    return out


@cache
def words(name: str) -> frozenset[str]:
    return frozenset(mapping(name))


@cache
def alternation(name: str) -> str:
    """The entries as a regex alternation, longest first (so 'type 1 diabetic' beats 'diabetic')."""
    return "|".join(re.escape(e) for e in sorted(mapping(name), key=len, reverse=True))


@cache
def phrase_re(name: str) -> re.Pattern[str]:
    """A regex matching any entry as whole words."""
    return re.compile(r"(?<![\w'-])(?:" + alternation(name) + r")(?![\w-])", re.I)


@cache
def irregular() -> dict[str, str]:
    """Past tense and past participle -> base form, for the irregular verbs."""
    out: dict[str, str] = {}
    for line in _lines("irregular_verbs.txt"):
        base, past, participle = line.split()
        out.setdefault(past, base)
        out.setdefault(participle, base)
    return out


@cache
def irregular_bases() -> frozenset[str]:
    return frozenset(line.split()[0] for line in _lines("irregular_verbs.txt"))


@cache
def transitions() -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(event phrases, ended-state phrases) pairs."""
    out = []
    for line in _lines("transitions.txt"):
        events, _, ended = line.partition("=>")
        out.append((tuple(e.strip().lower() for e in events.split(",") if e.strip()),
                    tuple(s.strip().lower() for s in ended.split(",") if s.strip())))
    return out

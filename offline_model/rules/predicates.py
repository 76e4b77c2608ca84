"""The predicate table: which kind of fact an analysed clause states, as a ``Fact``.

Why a table over clause features (subject, verb lemma, copula complement, negation, time) and
not over sentences: "I'm allergic to X", "we moved from X to Y", "my son Leo is 4" are
constructions; their words come from the user, and word classes (diets, conditions, jobs,
pets, tools) from the lexicons. A clause no predicate claims stores nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from . import lexicon
from .clause import Clause, analyse
from .rewrite import clean, rewrite
from .textutil import STOPWORDS
from .timeexpr import expires_in_days, find_time

ARTICLE_RE = re.compile(r"^(?:a|an|the|my|our|some|their)\s+", re.I)
VALUE_END_RE = re.compile(r"\s*(?:,|\bwith\b|\bsince\b|\bfor\b|\bbecause\b|\bbut\b|\bnow\b|\band\b|\bat work\b|\bover\b|\blast\b|\bthis\b|\bnext\b|\bon\b|\bin (?:19|20)\d\d).*$", re.I)


@dataclass
class Fact:
    """One fact stated by the user, with what it supersedes or retracts."""

    key: str
    kind: str  # semantic | episodic | procedural
    content: str
    importance: float
    single: bool = False
    value: str = ""
    evidence: str = ""
    expires_in_days: Optional[int] = None
    negated: bool = False  # the clause says this is no longer (or never was) true
    supersedes: list[str] = field(default_factory=list)  # old values whose memories this replaces
    retracts: list[str] = field(default_factory=list)  # values whose memories are no longer true


def value_of(text: str) -> str:
    """The head phrase of a complement ('Linux (Fedora) last week' -> 'Linux (Fedora)')."""
    time = find_time(text)
    if time:
        text = text[:time.start]
    v = VALUE_END_RE.sub("", ARTICLE_RE.sub("", text.strip()))
    return clean(v)


def norm(value: str) -> str:
    return re.sub(r"[^a-z0-9+#]+", " ", ARTICLE_RE.sub("", value.lower())).strip()


def _fact(c: Clause, key: str, importance: float, content: str | None = None, single: bool = False,
          value: str = "", kind: str = "semantic") -> Fact:
    return Fact(key=key, kind=kind, content=content or rewrite(c), importance=importance, single=single,
                value=value, evidence=(c.source or c.text).strip())


def _tool_key(value: str) -> tuple[str, bool]:
    tools = lexicon.mapping("tools")
    head = norm(value)
    for n in range(len(head.split()), 0, -1):
        phrase = " ".join(head.split()[:n])
        if phrase in tools:
            category = tools[phrase]
            single = category in lexicon.words("single_categories")
            return ("uses:" + category if single else "uses:" + phrase), single
    return "uses:" + head, False


def _copula(c: Clause) -> Optional[Fact]:
    rest = c.rest
    low = re.sub(r"^(?:(?:a|an|now|also|still|really|currently|officially|just|strictly|strict|mostly|fully)\s+)+", "", c.rest_low)
    if c.contrast_old:
        low = re.split(r",?\s+(?:and\s+)?(?:not|instead of|rather than)\s+", low)[0]
    low = re.sub(r"\s+(?:now|these days|nowadays|btw|too)$", "", clean(low).strip(" .!,"))
    if c.subject in ("my", "pronoun"):
        return _copula_of_theirs(c, low)
    diet = lexicon.mapping("diets").get(re.sub(r"\s+diet$", "", low))
    if diet:
        return _fact(c, "diet", 0.8, f"User is {diet}.", True, diet)
    m = re.match(r"^(?:\w+ly\s+)?(?:al+er?gic|intolerant|sensitive)\s+to\s+(.+)$", low)
    if m:
        value = value_of(re.search(r"\bto\s+(.+)$", rest, re.I).group(1))
        adverb = re.match(r"^(\w+ly)\s", low)
        return _fact(c, "allergy:" + norm(value), 0.9, f"User is {adverb.group(1) + ' ' if adverb else ''}allergic to {value}.", False, value)
    cond = lexicon.phrase_re("conditions").search(low)
    if cond and len(low.split()) <= 6 and not re.match(r"^(?:in|at|on|with|for)\b", low):
        return _fact(c, "health:" + norm(cond.group(0)), 0.8, value=cond.group(0))
    m = re.match(r"^(?:originally\s+)?from\s+(.+)$", low)
    if m and c.tense != "past":
        value = value_of(re.search(r"\bfrom\s+(.+)$", rest, re.I).group(1))
        return _fact(c, "origin", 0.7, f"User is from {value}.", True, value)
    m = re.match(r"^(?:based|living|located)\s+in\s+(.+)$", low)
    if m:
        value = value_of(re.search(r"\bin\s+(.+)$", rest, re.I).group(1))
        return _fact(c, "residence", 0.8, f"User lives in {value}.", True, value)
    if re.match(r"^(?:married|engaged|single|divorced|widowed|separated)\b", low):
        return _fact(c, "marital", 0.7, single=True, value=low.split()[0])
    m = re.match(r"^promoted\s+to\s+(.+)$", low)
    if m:
        return _fact(c, "job", 0.7, single=True, value=value_of(m.group(1)))
    m = re.match(r"^(\d{1,3})(?:\s*(?:years? old|yrs? old|y/?o))?$", low)
    if m and 5 <= int(m.group(1)) <= 110:
        return _fact(c, "age", 0.6, f"User is {m.group(1)} years old.", True, m.group(1))
    m = re.match(r"^(?:(?:a |an )?(?:big |huge |real |total )?fan of|into|obsessed with|addicted to|passionate about|crazy about)\s+(.+)$", low) \
        or re.match(r"^(?:a |an )?(?:big |huge |massive |real |total )?((?:[\w-]+ ){0,2}[\w-]+) (?:fan|lover|enthusiast|nerd|geek|buff|addict)\b", low)
    if m:
        value = value_of(m.group(1))
        return _fact(c, "pref:" + norm(value), 0.6, single=True, value=value)
    job = _job_head(c.rest_low)
    if job:
        possessive = re.match(r"^(?:her|his|their|my \w+'s)\b", low)
        return _fact(c, ("role:" if possessive else "job") + ("" if not possessive else job), 0.7, single=not possessive, value=job)
    if c.time and c.time.direction != "past" and re.match(r"^(?:in|at|on|away|off|visiting|travell?ing|out of)\b", low):
        return _episodic(c, "state:" + norm(low))
    return None


def _job_head(text: str) -> Optional[str]:
    """The occupation named by a copula complement ('a software engineer at X' -> 'software engineer')."""
    head = re.split(r"\s+(?:at|for|in|with|on|from|since|who|and|but)\s+|,|\s+(?:now|these days|nowadays|too)\b", text.strip())[0].strip(" .!")
    m = lexicon.phrase_re("jobs").search(head)
    if not m or len(head.split()) > 6 or m.end() < len(head.rstrip(" .!")) - 1:
        return None
    if not re.match(r"^(?:a|an|the|her|his|their|my|our|\w+(?:-\w+)*)\b", head):
        return None
    return re.sub(r"^(?:a|an|the|her|his|their|my|our)\s+", "", head).strip()


def _copula_of_theirs(c: Clause, low: str) -> Optional[Fact]:
    """'my son Leo is 4', "my wife's name is Priya", 'she's a paediatrician' (about the user's people)."""
    head = c.head or ""
    kind = c.head_kind
    rest = re.split(r",?\s+(?:and\s+)?(?:not|instead of|rather than)\s+", c.rest)[0] if c.contrast_old else c.rest
    names = re.match(r"^(?:named|called)?\s*([A-Za-z][\w'-]*(?: [A-Z][\w'-]*)?)$", rest.strip(" .!,"))
    said_name = any(t.low == "name" for t in c.subject_tokens) or re.match(r"^(?:named|called)\b", low)
    if said_name and names and kind in ("family", "people", "pets"):
        name = names.group(1)
        name = name[:1].upper() + name[1:]
        if kind == "pets":
            return _fact(c, f"pet:{head}:{name.lower()}", 0.6, f"User has {_a(head)} {head} named {name}.", False, name)
        return _fact(c, f"family:{head}", 0.7, f"User's {head} is named {name}.", head in SPOUSES, name)
    m = re.match(r"^(\d{1,2})(?:\s*(?:years? old|yrs? old|y/?o|months? old))?$", low)
    if m and kind in ("family", "pets"):
        who = f"{head} {c.name}" if c.name else head
        unit = "months old" if "month" in low else "years old"
        return _fact(c, f"family:{head}:{(c.name or '').lower()}:age", 0.6, f"User's {who} is {m.group(1)} {unit}.", True, m.group(1))
    if kind in ("family", "people", "pets", "possessions") or (kind == "self_attributes"):
        if _evaluative(low):
            return None
        if kind == "self_attributes":
            return _fact(c, "attr:" + head, 0.6, single=True, value=value_of(c.rest))
        return _fact(c, f"about:{head}:{norm(low)[:40]}", 0.6, value=value_of(c.rest))
    return None


SPOUSES = {"wife", "husband", "partner", "spouse", "girlfriend", "boyfriend", "fiance", "fiancee"}


def _a(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _evaluative(low: str) -> bool:
    words = low.split()
    ev = lexicon.words("evaluatives")
    return not words or words[0] in ev or " ".join(words[:2]) in ev or " ".join(words[:3]) in ev


def _episodic(c: Clause, key: str) -> Fact:
    fact = _fact(c, key, 0.4, kind="episodic")
    if c.time and c.time.direction == "future":
        fact.expires_in_days = 0  # filled in by facts_of (needs today)
    return fact


def _verb(c: Clause) -> Optional[Fact]:
    lem, rest, low = c.verb_lemma, c.rest, c.rest_low
    if c.progressive and c.time and c.time.direction == "future":
        return _generic(c)
    if lem == "live":
        return _live(c)
    if lem in ("move", "relocate") and not c.progressive and c.tense != "future":
        m = re.match(r"^(?:back\s+)?to\s+(.+)$", low)
        if m:
            value = value_of(rest[-len(m.group(1)):])
            return _fact(c, "residence", 0.8, f"User lives in {value}.", True, value)
    if lem == "work":
        key = "job" if " as " in f" {low} " else "employer" if re.search(r"\b(?:at|for)\b", low) else "work:" + norm(low)[:30]
        return _fact(c, key, 0.7, single=key in ("job", "employer"), value=value_of(re.split(r"\b(?:as|at|for)\b", rest)[-1]))
    if lem in ("study", "major", "attend"):
        return _fact(c, "study", 0.6, single=True, value=value_of(rest))
    if lem in ("use", "write", "code", "program", "run") and rest and not _pronoun_object(low):
        if lem in ("write", "run") and not _tool_key(value_of(rest))[1] and norm(value_of(rest)).split()[0:1] and norm(value_of(rest)).split()[0] not in lexicon.words("tools"):
            return _generic(c)
        value = value_of(re.sub(r"^(?:in|with)\s+", "", rest))
        key, single = _tool_key(value)
        return _fact(c, key, 0.6, single=single, value=value)
    if lem in ("like", "love", "enjoy", "adore", "prefer", "hate", "dislike", "detest", "loathe", "stand"):
        return _preference(c)
    if lem == "have":
        return _have(c)
    if lem in ("play", "practice", "practise", "do") and rest and not _pronoun_object(low):
        value = value_of(re.sub(r"^the\s+", "", rest))
        return _fact(c, "hobby:" + norm(value), 0.5, value=value)
    if lem in ("eat", "drink") and c.negated:
        return _fact(c, "avoid:" + norm(value_of(rest)), 0.7, value=value_of(rest))
    if lem in ("want", "plan", "aim", "try", "intend", "hope") and re.match(r"^to\s+\w+", low) and not re.match(r"^to\s+(?:know|ask|see|check|say|talk|chat|vent|rant|go with|hear|understand|find out|make sure)\b", low):
        value = value_of(rest[3:])
        return _fact(c, "goal:" + norm(value)[:40], 0.6, value=value)
    if lem == "speak":
        return _fact(c, "speaks:" + norm(value_of(rest)), 0.5, value=value_of(rest))
    if lem == "get" and re.match(r"^(?:promoted\s+to|a\s+promotion\s+to)\s+(.+)$", low):
        value = value_of(re.sub(r"^(?:promoted|a promotion)\s+to\s+", "", rest, flags=re.I))
        return _fact(c, "job", 0.7, f"User was promoted to {value}.", True, value)
    if lem == "get" and re.match(r"^(?:engaged|married|divorced)\b", low):
        return _fact(c, "marital", 0.7, single=True, value=low.split()[0])
    if lem in ("start", "begin", "join", "get") and re.search(r"\bjob\b.*\b(?:at|with)\s+(.+)$", low):
        value = value_of(re.split(r"\b(?:at|with)\s+", rest)[-1])
        return _fact(c, "employer", 0.7, single=True, value=value)
    return _generic(c)


def _pronoun_object(low: str) -> bool:
    return bool(re.match(r"^(?:it|that|this|them|these|those|you|your|one|ones|what|how|if)\b", low)) or bool(re.search(r"\b(?:you|your)\b", low))


def _live(c: Clause) -> Optional[Fact]:
    low = c.rest_low
    m = re.search(r"\b(?:in|at)\s+(.+)$", c.rest)
    if re.match(r"^(?:alone|by myself|on my own)\b", low):
        return _fact(c, "household", 0.6, "User lives alone." if not m or not m.group(1)[:1].isupper() else None, True, "alone")
    if m and not re.match(r"^(?:a|an|the)\s", m.group(1), re.I):
        value = value_of(m.group(1))
        return _fact(c, "residence", 0.8, f"User lives in {value}.", True, value)
    if re.match(r"^with\b", low):
        return _fact(c, "household", 0.6, single=True, value=value_of(c.rest[5:]))
    return None


def _preference(c: Clause) -> Optional[Fact]:
    lem, low = c.verb_lemma, c.rest_low
    if lem == "stand" and not (c.negated and c.modal == "can"):
        return None
    if _pronoun_object(low) or re.match(r"^(?:to know|to ask|it when|when|if|how|the way)\b", low) or not low:
        return None
    value = value_of(c.rest)
    positive = lem in ("like", "love", "enjoy", "adore", "prefer") and not c.negated
    if lem == "prefer" and re.search("|".join(re.escape(w) for w in lexicon.words("answer_style")), low):
        return Fact("proc:style", "procedural", f"User prefers {clean(c.rest)}.", 0.7, True, value, c.text.strip())
    verb = {"like": "likes", "love": "loves", "enjoy": "enjoys", "adore": "adores", "prefer": "prefers"}.get(lem, "likes")
    content = f"User {verb} {value}." if positive else f"User dislikes {value}."
    return _fact(c, "pref:" + norm(value), 0.6, content, True, value)


def _have(c: Clause) -> Optional[Fact]:
    low = c.rest_low
    if c.negated and c.modal == "can" and low and not _pronoun_object(low):
        return _fact(c, "avoid:" + norm(value_of(c.rest)), 0.7, value=value_of(c.rest))
    if c.negated or not low:
        return None
    cond = lexicon.phrase_re("conditions").search(low)
    if cond and cond.start() <= 12:
        return _fact(c, "health:" + norm(cond.group(0)), 0.8, value=cond.group(0))
    m = re.match(r"^(a|an|one|two|three|four|five|six|\d)\s+(?:\w+\s+){0,2}?(\w+)\b", low)
    if m and m.group(2) in lexicon.words("family"):
        rel = lexicon.mapping("family")[m.group(2)]
        return _fact(c, f"family:count:{rel}", 0.6, single=True, value=m.group(1))
    m = re.match(r"^(a|an|one|two|three|four|five|six|\d)\s+(?:[\w-]+\s+){0,2}?(%s)\b" % lexicon.alternation("pets"), low)
    if m and not re.search(r"\b(?:named|called)\b", low):
        species = lexicon.mapping("pets")[m.group(2)]
        return _fact(c, f"pet:{species}:count", 0.6, single=True, value=m.group(1))
    head = lexicon.phrase_re("possessions").search(low)
    if head and head.start() <= 20:
        return _fact(c, "own:" + head.group(0), 0.5, value=value_of(c.rest))
    if c.time:
        return _episodic(c, "event:" + norm(low)[:40])
    return None


def _generic(c: Clause) -> Optional[Fact]:
    """A first-person action or habit not in the table: dated events, plans, ongoing activities, habits."""
    lem, low = c.verb_lemma, c.rest_low
    if lem in lexicon.words("mental_verbs") or lem in ("be", "go", "get", "make", "let", "look", "wait") and not c.time:
        return None
    if _pronoun_object(low):
        return None
    if c.tense == "past" or c.tense == "perfect" and not c.progressive:
        if c.time or any(t.low in ("just", "finally", "recently") for t in c.tokens[:c.rest_start]):
            return _episodic(c, f"event:{lem}:{norm(value_of(c.rest))[:30]}")
        return None
    if c.tense == "future" or c.progressive and c.time and c.time.direction != "past":
        return _episodic(c, f"plan:{lem}:{norm(value_of(c.rest))[:30]}") if c.time else None
    if c.progressive or c.tense == "perfect":
        return _fact(c, f"activity:{lem}:{norm(value_of(c.rest))[:30]}", 0.5)
    if c.time and c.time.direction == "future":
        return _episodic(c, f"plan:{lem}:{norm(value_of(c.rest))[:30]}")
    return _fact(c, f"habit:{lem}:{norm(value_of(c.rest))[:30]}", 0.5)


ProcRule = tuple[re.Pattern[str], Callable[[re.Match[str]], str], str]  # (form, content, key or "" for a key from the content)
PROCEDURAL: list[ProcRule] = [
    # The name runs to the first comma: what follows is an aside ("call me Sam, not Samuel").
    (re.compile(r"^(?:please\s+)?(?:call me|address me as|refer to me as)\s+(?P<x>[\w'-]+(?: [\w'-]+){0,2})\s*(?:,.*)?$", re.I), lambda m: f"User wants to be called {m['x']}.", "proc:callme"),
    (re.compile(r"^(?:please\s+)?(?:(?:always|only|from now on,?)\s+)?(?:answer|respond|reply|write|talk|speak)(?: to me)?(?: only)? in (?P<x>[A-Za-z][\w -]{0,20})$", re.I), lambda m: f"User wants replies in {m['x'][:1].upper() + m['x'][1:]}.", "proc:language"),
    (re.compile(r"^(?:please\s+)?keep (?:your |the |my )?(?:answers|responses|replies)\s+(?P<x>[\w ,-]{1,40})$", re.I), lambda m: f"User wants answers kept {m['x']}.", "proc:style"),
    (re.compile(r"^(?:please\s+)?(?:from now on|going forward|in future|in the future),?\s+(?:please\s+)?(?P<x>(?!i\b|my\b).{3,80})$", re.I), lambda m: f"User wants the assistant to {m['x'][:1].lower() + m['x'][1:]}.", ""),
    (re.compile(r"^(?:please\s+)?(?P<adv>always|never)\s+(?P<x>[a-z][\w' -]{2,80})$", re.I), lambda m: f"User wants the assistant to {m['adv'].lower()} {m['x']}.", ""),
]


def procedural(c: Clause) -> Optional[Fact]:
    """Standing instructions about how to answer ('call me Sam', 'keep answers short')."""
    text = clean(re.sub(r"^(?:(?:btw|also|oh|and|ok|okay|so)[,\s]+)+", "", c.text.strip(), flags=re.I)).rstrip(".")
    for pattern, content, key in PROCEDURAL:
        m = pattern.match(text)
        if m:
            body = content(m)
            return Fact(key or "proc:" + norm(body)[:40], "procedural", body, 0.7, True, m.group(m.lastindex or 0), c.text.strip())
    styles = "|".join(re.escape(w) for w in sorted(lexicon.words("answer_style"), key=len, reverse=True))
    m = re.match(rf"^(?P<np>(?:[\w-]+\s+){{0,3}}(?:{styles})(?:\s+with\s+[\w\s-]+?)?)\s+(?:\w+ly\s+)?(?:help|helps|work better for|works better for|suit|suits)\s+me\b", text, re.I)
    if m:
        return Fact("proc:style", "procedural", f"User prefers {m['np'].strip()}.", 0.7, True, m["np"], c.text.strip())
    return None


def np_facts(c: Clause) -> list[Fact]:
    """Facts named inside noun phrases: 'my husband Tom', 'a rescue greyhound named Pepper'."""
    out: list[Fact] = []
    text = c.text
    family = lexicon.alternation("family")
    for m in re.finditer(rf"\b(?:my|our)\s+(?:\w+\s+)?(?P<rel>{family})(?:'s name is|,)?\s+(?P<name>[A-Z][a-z]+)\b", text, re.I):
        name = m.group("name")
        if not name[:1].isupper() or name.lower() in lexicon.words("common_verbs") or name.lower() in ("and", "is", "has", "was"):
            continue
        rel = lexicon.mapping("family").get(m.group("rel").lower(), m.group("rel").lower())
        out.append(Fact(f"family:{rel}", "semantic", f"User's {rel} is named {name}.", 0.7, rel in SPOUSES, name, c.text.strip()))
    pets = lexicon.alternation("pets")
    for m in re.finditer(rf"\b(?P<det>a|an|my|our)\s+(?P<adj>(?:[\w-]+\s+){{0,2}}?)(?P<pet>{pets})(?:'s name is|\s+(?:named|called)|,)?\s+(?P<name>[A-Z][\w'-]*|(?<=named )\w+|(?<=called )\w+)", text, re.I):
        name = m.group("name")
        if not (name[:1].isupper() or re.search(r"(?:named|called)\s+$", text[:m.start("name")])):
            continue
        if name.lower() in ("and", "is", "has", "was", "keeps", "who", "that"):
            continue
        species = m.group("pet").lower()
        adj = m.group("adj").lower().strip()
        desc = f"{adj} {species}".strip()
        name = name[:1].upper() + name[1:]
        out.append(Fact(f"pet:{lexicon.mapping('pets')[species]}:{name.lower()}", "semantic",
                        f"User has {_a(desc)} {desc} named {name}.", 0.6, False, name, c.text.strip()))
    return out


def clause_facts(c: Clause, today: dt.date) -> list[Fact]:
    """Every fact the clause states (empty for questions, requests, hypotheticals, others' words)."""
    if c.mood in ("imperative", "fragment"):
        fact = procedural(c) or (_cancellation(c) if c.mood == "fragment" else None)
        return [fact] if fact else []
    if c.mood != "statement":
        return []
    proc = procedural(c)
    if proc:
        return [proc]
    cancel = _cancellation(c)
    if cancel:
        return [cancel]
    if not c.about_user:
        return []
    if c.subject == "my" and c.head_kind == "other":
        theirs = _possession_of_other_kind(c)
        return ([theirs] if theirs else []) + np_facts(c)
    if c.subject in ("my", "pronoun") and c.head_kind == "people":
        return _reported(c) + np_facts(c)
    main = _main(c)
    facts = ([main] if main else []) + [f for f in np_facts(c) if not main or f.key != main.key]
    for fact in facts:
        if fact.kind == "episodic" and c.time and c.time.direction != "past":
            fact.expires_in_days = expires_in_days(c.time.text, today)
        if fact.kind == "episodic" and c.time and c.time.direction in ("future", "past") and "(as of" not in fact.content:
            fact.content = fact.content.rstrip(".") + f" (as of {today.isoformat()})."
    return facts


def _possession_of_other_kind(c: Clause) -> Optional[Fact]:
    """'our team standup is every Tuesday at 10': a plain statement about something of the user's."""
    if c.negated or not c.head or c.head in lexicon.words("non_attributes"):
        return None
    if not c.copula and (not c.verb or c.verb_lemma in lexicon.words("mental_verbs") or c.tense == "past"):
        return None
    low = clean(c.rest_low)
    if _evaluative(low) or len(low.split()) > 10 or _pronoun_object(low):
        return None
    return _fact(c, f"attr:{c.head}", 0.5, single=True, value=value_of(c.rest))


def _reported(c: Clause) -> list[Fact]:
    """Other people's facts are theirs; only what a professional of the user's says about the user counts
    ('my GP says it's asthma', 'my dentist told me I have ...')."""
    if c.verb_lemma in ("say", "tell", "think", "confirm", "reckon") and c.head in lexicon.words("professionals") \
            and re.search(r"\b(?:it's|it is|i have|i've got|i'm|i am)\b", c.rest_low):
        return [_fact(c, f"about:{c.head}:{norm(c.rest_low)[:40]}", 0.7)]
    return []


def _cancellation(c: Clause) -> Optional[Fact]:
    low = " ".join(t.low for t in c.tokens).replace(" n't", "n't").replace(" '", "'")
    for phrase in sorted(lexicon.words("cancel_phrases"), key=len, reverse=True):
        i = low.find(" " + phrase)
        if i > 0:
            subject = re.sub(r"\b(?:the|my|our|whole|plan|plans|move|trip|idea|thing)\b", " ", low[:i])
            values = [w for w in re.findall(r"[a-z][\w'-]+", subject)
                      if w not in lexicon.words("fillers") and w not in STOPWORDS and w not in ("change", "plans", "plan")]
            if values:
                return Fact("cancelled", "semantic", "", 0.0, retracts=[" ".join(values)], evidence=c.text.strip())
    return None


def _main(c: Clause) -> Optional[Fact]:
    """The clause's own predicate, with corrections, changes and endings applied."""
    end = _ending(c)
    if end:
        return end
    if c.negated and (c.no_longer or c.correction):
        return _retraction(c)
    if c.negated and c.verb_lemma not in ("like", "love", "enjoy", "stand", "eat", "drink", "have") and not c.copula:
        return None
    if c.negated and c.copula:
        m = re.match(r"^(?:a |an )?(?:big |huge )?(?:fan of|into|keen on)\s+(.+)$", c.rest_low)
        if m:
            value = value_of(c.rest[-len(m.group(1)):])
            return _fact(c, "pref:" + norm(value), 0.6, f"User dislikes {value}.", True, value)
        return None
    if c.from_old and c.verb_lemma in ("switch", "move", "change", "go", "migrate", "upgrade", "convert", "transfer"):
        new = value_of(re.sub(r"^from\s+.+?\s+(?:to|for)\s+", "", c.rest, flags=re.I))
        return _change(c, new, [c.from_old])
    if c.verb_lemma in ("switch", "change", "migrate", "upgrade", "convert") and re.match(r"^(?:over\s+)?to\s+", c.rest_low):
        return _change(c, value_of(re.sub(r"^(?:over\s+)?to\s+", "", c.rest, flags=re.I)), [])
    fact = _copula(c) if c.copula else _verb(c) if c.verb else None
    if fact and c.contrast_old:
        fact.supersedes.append(c.contrast_old)
        fact.content = re.sub(r",?\s+(?:and\s+)?(?:not|instead of|rather than)\s+[^,.]+", "", fact.content)
    return fact


def _change(c: Clause, new: str, old: list[str]) -> Fact:
    if c.verb_lemma == "move":
        return Fact("residence", "semantic", f"User lives in {new}.", 0.8, True, new, c.text.strip(), supersedes=old)
    key, single = _tool_key(new)
    return Fact(key, "semantic", f"User uses {new}.", 0.6, single, new, c.text.strip(), supersedes=old)


def _ending(c: Clause) -> Optional[Fact]:
    """'I quit smoking', 'sold the car', 'gave up coffee': the thing named is no longer true."""
    words = [t.low for t in c.tokens]
    vp = " ".join(words[c.vp_start:c.rest_start + 2]).replace(" '", "'")
    for phrase in sorted(lexicon.words("end_verbs"), key=len, reverse=True):
        m = re.search(rf"(?:^|\s){re.escape(phrase)}\s+(?P<obj>.+)$", " ".join(words[c.vp_start:]))
        if m and phrase.split()[0] in vp.split()[:4] and not c.negated:
            obj = re.sub(r"^(?:being|using|eating|drinking|doing|playing|the|my|a|an|our)\s+", "", m.group("obj"))
            obj = value_of(obj)
            if not obj or _pronoun_object(obj):
                return None
            stem = obj if len(obj.split()) > 1 else re.sub(r"(?:ing|e|s)$", "", obj)
            positive = analyse("I am " + obj, 0)
            retracts = [stem] + ([p.value for p in [_copula(positive)] if p and p.value] if positive.copula else [])
            kind = "episodic" if c.time else "semantic"
            c.tense = "past"
            return Fact("ended:" + norm(obj), kind, rewrite(c), 0.6, False, obj, c.text.strip(), retracts=retracts)
    return None


def _retraction(c: Clause) -> Optional[Fact]:
    """'I'm not X anymore', "I don't use X anymore", 'turns out I'm not X after all'."""
    rest = re.sub(r"\b(?:any ?more|no longer|after all|at all|now|btw|either)\b", "", c.rest, flags=re.I).strip(" ,.!")
    positive = replace(c, negated=False, no_longer=False, correction=False, contrast_old=None)
    fact = (_copula(positive) if c.copula else _verb(positive)) if rest else None
    value = value_of(re.sub(r"^(?:at|in|with|for|a|an|the)\s+", "", rest, flags=re.I))
    if fact is None:
        fact = Fact("none", "semantic", "", 0.5, value=value, evidence=c.text.strip())
    fact.negated, fact.value = True, fact.value or value
    fact.retracts = [value] if value else []
    return fact

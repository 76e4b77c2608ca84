"""From user turns to memory operations: facts per turn, then add / update / retract against
the memories that already exist.

Why here and shared: the custom pipeline's schema, Mem0's additive prompt and the memory-tool
agent must all store the same facts and supersede the same memories. An existing memory is
read back with the very same grammar (its third-person text turned into first person), so an
update finds the memory about the same attribute; a change that names the old value ("from X
to Y", "X, not Y", "no longer X") finds every memory mentioning it.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Optional

from . import lexicon
from .clause import Clause, analyse, lemma
from .predicates import Fact, clause_facts, norm
from .secrets import is_secret
from .segment import own_words, parts, sentences
from .textutil import normalise_quotes, stem

SUBORDINATE_DROPPED = {"if", "unless", "which"}
CLEFT_RE = re.compile(r"^(?P<x>[\w' -]+?)\s+(?:is|are)\s+(?:the|my)\s+(?:one\s+|only\s+)?(?:[\w-]+\s+){0,2}?(?:that\s+)?I\s+(?P<vp>[^,.;!?]+)(?P<tail>.*)$", re.I)


def _analyse(chunk: str, start: int, question: bool, inherit: Optional[Clause]) -> Clause:
    """Analyse a clause; a cleft ('X is the one food I can't stand') is read as 'I can't stand X'."""
    m = CLEFT_RE.match(chunk.strip())
    if m and m.group("x").split()[0].lower() not in ("i", "it", "this", "that", "what", "there", "here"):
        c = analyse(f"I {m.group('vp')} {m.group('x')}", start, question)
        c.source = chunk
        return c
    return analyse(chunk, start, question, inherit=inherit)


@dataclass
class Turn:
    role: str
    text: str


@dataclass
class Operation:
    """One memory operation in the lab's schema."""

    op: str
    ref: Optional[str]
    kind: str
    content: str
    importance: float
    expires_in_days: Optional[int]
    evidence: str

    def as_dict(self) -> dict:
        return {"op": self.op, "ref": self.ref, "kind": self.kind, "content": self.content,
                "importance": self.importance, "expires_in_days": self.expires_in_days, "evidence": self.evidence}


def clauses(text: str) -> list[Clause]:
    """The analysed clauses of a user turn (own words only), with subjects carried and pronouns resolved."""
    norm_text = normalise_quotes(text)
    masked = own_words(norm_text)
    out: list[Clause] = []
    antecedent: Optional[Clause] = None
    for sentence in sentences(masked):
        previous: Optional[Clause] = None
        scope_closed = False  # a request or hypothetical opens the sentence: the rest is in its scope
        sentence_parts = parts(masked, sentence)
        for part in sentence_parts:
            chunk = text[part.start:part.end]
            if "\u2591" in masked[part.start:part.end] or is_secret(chunk):
                previous = None
                continue
            c = _analyse(chunk, part.start, sentence.question and part is sentence_parts[-1], previous if part.conj in ("and", "but", "or", "") else None)
            if part.conj in SUBORDINATE_DROPPED:
                c.mood = "hypothetical"
            if scope_closed and c.mood == "statement":
                c.mood = "hypothetical"
            if previous is None and c.mood in ("imperative", "hypothetical") and c.tokens and c.tokens[0].low in ("pretend", "imagine", "suppose", "if", "write", "generate", "act"):
                scope_closed = True
            if c.subject == "pronoun":
                if antecedent is None:
                    c.subject = "third"
                else:
                    c.head, c.head_kind, c.name = antecedent.head, antecedent.head_kind, antecedent.name
            if c.subject in ("my", "with") and c.head_kind in ("family", "people", "pets"):
                antecedent = c
            elif antecedent is not None and c.first_person and c.head is None:
                c.head, c.head_kind = antecedent.head, antecedent.head_kind
            out.append(c)
            previous = c
    return out


def facts_from_user_text(text: str, today: dt.date) -> list[Fact]:
    """All facts stated in one user turn (own words only); evidence is an exact substring of ``text``."""
    facts: list[Fact] = []
    last: list[Fact] = []
    for c in clauses(text):
        if c.retracts_previous:
            facts = [f for f in facts if all(f is not taken for taken in last)]
        found = clause_facts(c, today)
        _resolve_possessives(c, found)
        facts.extend(found)
        last = found if found else last if c.retracts_previous else []
    return [f for f in facts if f.evidence and (f.evidence in text or not f.content)]


def _resolve_possessives(c: Clause, facts: list[Fact]) -> None:
    """'I'm her main carer' after 'my mum ...': 'User is their mum's main carer.'"""
    if c.head and c.subject not in ("my", "pronoun") and c.head_kind == "family":
        for fact in facts:
            fact.content = re.sub(r"\b(?:her|his)\b", f"their {c.head}'s", fact.content, count=1)


# -- existing memories -------------------------------------------------------------------
def third_to_first(content: str) -> str:
    """A third-person memory back in first person ('User lives in Pune.' -> 'I live in Pune')."""
    c = re.sub(r"\s*\(as of [^)]*\)", "", normalise_quotes(content)).strip().rstrip(".")
    c = re.sub(r"^\[[^\]]*\]\s*(?:\((?:semantic|episodic|procedural)\)\s*)?", "", c)
    c = re.sub(r"^(?:the )?user\b", "User", c, flags=re.I)
    if not c.startswith("User"):
        return c
    rest = c[4:]
    rest = re.sub(r"\btheir\b", "my", rest)
    rest = re.sub(r"\bthem\b", "me", rest)
    if rest.startswith("'s "):
        return "my " + rest[3:]
    if rest.startswith(" and "):
        return rest[5:] + " and I"
    m = re.match(r"^ (?:(\w+ly|also|still|just|mostly) )?(is|has|does|was|will|can|wants|\w+)\b(.*)$", rest)
    if not m:
        return c
    verb = m.group(2)
    first = {"is": "am", "has": "have", "does": "do", "was": "was", "will": "will", "can": "can"}.get(verb)
    if first is None:
        first = lemma(verb) if verb.endswith("s") and verb not in lexicon.irregular() else verb
    return "I " + (m.group(1) + " " if m.group(1) else "") + first + m.group(3)


PROCEDURAL_KEYS = [(re.compile(r"^User wants to be called\b"), "proc:callme"), (re.compile(r"^User wants replies in\b"), "proc:language"),
                   (re.compile(r"^User (?:wants answers kept|prefers)\b"), "proc:style")]


def parse_memory(content: str, today: dt.date | None = None) -> Optional[Fact]:
    """The fact (attribute key) behind an existing memory's text, via the same grammar."""
    for pattern, key in PROCEDURAL_KEYS:
        if pattern.match(content):
            return Fact(key, "procedural", content, 0.7, True)
    if content.startswith("User wants the assistant to "):
        return Fact("proc:" + norm(content)[:40], "procedural", content, 0.7, True)
    text = third_to_first(content)
    for c in clauses(text):
        for fact in clause_facts(c, today or dt.date.today()):
            return fact
    return None


def _stems(text: str) -> list[str]:
    return [stem(w) for w in re.findall(r"[a-z0-9+#]+", normalise_quotes(text).lower())]


def mentions(text: str, value: str) -> bool:
    """Whether a memory mentions a value (all its words, stemmed, in order-free match)."""
    wanted = [w for w in _stems(value) if w not in ("a", "an", "the", "my", "their")]
    have = set(_stems(text))
    return bool(wanted) and all(w in have for w in wanted)


@dataclass
class Known:
    ref: Optional[str]  # None: added earlier in this same extraction
    text: str
    fact: Optional[Fact]


def _same(a: str, b: str) -> bool:
    strip = lambda s: re.sub(r"\s*\(as of [^)]*\)", "", s).strip().rstrip(".").lower()
    return strip(a) == strip(b)


def _transition_olds(fact: Fact, known: list[Known]) -> list[Known]:
    """Memories of a state that the fact's event ends ('arrived' ends 'pregnant')."""
    low = fact.content.lower()
    out = []
    for events, ended in lexicon.transitions():
        hit = [e for e in events if re.search(rf"\b{re.escape(e)}\b", low)]
        if not hit:
            continue
        for k in known:
            t = k.text.lower()
            if any(re.search(rf"\b{re.escape(s)}\b", t) for s in ended) and not any(e in t for e in events):
                out.append(k)
    return out


class Reconciler:
    """Applies facts in order to the known memories, producing operations."""

    def __init__(self, existing: list[tuple[str, str]], today: dt.date) -> None:
        self.known = [Known(ref, text, parse_memory(text, today)) for ref, text in existing]
        self.ops: list[Operation] = []
        self.touched: set[int] = set()

    def _live(self) -> list[Known]:
        return [k for k in self.known if id(k) not in self.touched]

    def retract(self, k: Known, evidence: str) -> None:
        self.touched.add(id(k))
        if k.ref is None:
            self.ops = [o for o in self.ops if not (o.ref is None and o.content == k.text)]
            return
        kind = k.fact.kind if k.fact else "semantic"
        self.ops.append(Operation("retract", k.ref, kind, k.text, k.fact.importance if k.fact else 0.5, None, evidence))

    def replace(self, k: Known, fact: Fact, content: str | None = None) -> None:
        content = content or fact.content
        if any(_same(other.text, content) for other in self._live() if other is not k):
            self.retract(k, fact.evidence)
            return
        self.touched.add(id(k))
        if k.ref is None:
            self.ops = [o for o in self.ops if not (o.ref is None and o.content == k.text)]
            self.add(fact, content)
            return
        self.ops.append(Operation("update", k.ref, fact.kind, content, fact.importance, fact.expires_in_days, fact.evidence))
        self.known.append(Known(k.ref, content, fact))
        self.touched.add(id(self.known[-1]))

    def add(self, fact: Fact, content: str | None = None) -> None:
        content = content or fact.content
        self.ops.append(Operation("add", None, fact.kind, content, fact.importance, fact.expires_in_days, fact.evidence))
        self.known.append(Known(None, content, fact))

    def apply(self, fact: Fact) -> None:
        live = self._live()
        for value in fact.retracts:
            for k in live:
                if mentions(k.text, value) or (fact.negated and k.fact and fact.key not in ("none",) and k.fact.key == fact.key):
                    self.retract(k, fact.evidence)
        if fact.negated or not fact.content:
            return
        live = self._live()
        if any(_same(k.text, fact.content) for k in live):
            return
        olds: list[Known] = []
        for value in fact.supersedes:
            olds += [k for k in live if mentions(k.text, value) and k not in olds]
        olds += [k for k in _transition_olds(fact, live) if k not in olds]
        if fact.single:
            olds += [k for k in live if k.fact and k.fact.key == fact.key and k not in olds]
        if not olds:
            self.add(fact)
            return
        self.replace(olds[0], fact)
        for k in olds[1:]:
            old_value = next((v for v in fact.supersedes if mentions(k.text, v)), None)
            if old_value and fact.value and (k.fact is None or k.fact.key != fact.key):
                # another memory naming the corrected value: the same memory with the value put right
                new = re.sub(re.escape(old_value), fact.value, k.text, flags=re.I)
                self.replace(k, Fact(k.fact.key if k.fact else "corrected", k.fact.kind if k.fact else "semantic", new,
                                     k.fact.importance if k.fact else 0.5, evidence=fact.evidence), new)
            else:
                self.retract(k, fact.evidence)


def reconcile(turns: list[Turn], existing: list[tuple[str, str]], today: dt.date) -> list[Operation]:
    """Operations (add/update/retract) for the USER turns of a conversation against existing memories."""
    r = Reconciler(existing, today)
    previous = ""
    for turn in turns:
        if turn.role != "user":
            previous = turn.text
            continue
        for fact in facts_from_user_text(turn.text, today):
            r.apply(fact)
        for op in _context_correction(turn.text, previous, r):
            r.ops.append(op)
    return r.ops


CONTEXT_RE = re.compile(r"^(?:no|nope|actually)?[,.!]?\s*(?:it's|it is|that's|that is)\s+(?:actually\s+)?(?P<x>[\w' -]+?)[.!]*$", re.I)
WRONG_RE = re.compile(r"\b(?:that's|that is|it's|it is)\s+(?:not true|wrong|incorrect|not right|outdated|no longer true)\b", re.I)


def _context_correction(text: str, previous: str, r: Reconciler) -> list[Operation]:
    """'No, it's Mysore.' / "That's wrong." right after the assistant named a memory's value."""
    if not previous:
        return []
    named = [k for k in r._live() if k.ref and k.fact and k.fact.value and re.search(rf"\b{re.escape(k.fact.value)}\b", previous, re.I)]
    if len(named) != 1:
        return []
    k = named[0]
    for sentence in sentences(own_words(normalise_quotes(text))):
        s = text[sentence.start:sentence.end].strip()
        if WRONG_RE.search(s):
            r.touched.add(id(k))
            return [Operation("retract", k.ref, k.fact.kind, k.text, k.fact.importance, None, s)]
        m = CONTEXT_RE.match(s)
        if m and k.fact.single and norm(m["x"]) != norm(k.fact.value):
            content = re.sub(re.escape(k.fact.value), m["x"].strip(), k.text, count=1, flags=re.I)
            r.touched.add(id(k))
            return [Operation("update", k.ref, k.fact.kind, content, k.fact.importance, None, s)]
    return []

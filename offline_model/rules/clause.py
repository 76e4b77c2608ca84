"""Clause analysis: who speaks about whom, with which verb, negation, tense, modality and time.

Why a (small) grammar: whether "I'm allergic to peanuts" is a fact about the user depends on
the subject (I, we, my son, someone else), the mood (statement, question, request,
hypothetical), negation and modality, not on the particular words. This module reads those
from a clause's tokens; ``predicates`` then decides which kind of fact, if any, it states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from . import lexicon
from .textutil import STOPWORDS
from .timeexpr import TimePhrase, find_time

TOKEN_RE = re.compile(r"\w+(?=n't\b)|n't\b|'(?:m|re|s|ve|d|ll)\b|\w+(?:[-.&]\w+)*[+#]*|[^\w\s]")
BE = {"am": "present", "'m": "present", "is": "present", "'s": "present", "are": "present", "'re": "present",
      "was": "past", "were": "past", "be": "present", "been": "perfect", "being": "present"}
HAVE = {"have", "'ve", "has", "had"}
MODALS = {"can", "ca", "could", "should", "might", "may", "must", "shall", "would", "'d", "will", "'ll", "wo"}
HEDGE_MODALS = {"could", "should", "might", "may", "would", "must"}
NEGATORS = {"not", "n't", "never", "no"}
ADVERBS = set("""also still just really actually now currently mostly genuinely basically always usually often sometimes
finally recently already even only totally absolutely definitely officially seriously literally kinda pretty
both all officially newly soon then again ever truly honestly obviously apparently kind sort""".split())
SUBJECT_I = {"i"}
SUBJECT_WE = {"we"}
PRONOUNS = {"he", "she", "they"}
THIRD = set("""it that this there here everything everyone everybody nothing nobody someone somebody something
you your yours what who which these those one people anyone anybody""".split())
QUESTION_WORDS = set("""what what's whats how how's why when where where's who who's whom whose which""".split())
QUESTION_AUX = {"do", "does", "did", "can", "ca", "could", "would", "will", "should", "is", "are", "am", "was",
                "were", "have", "has", "shall", "may", "might", "wo", "any", "anything", "isn", "aren", "don"}


@dataclass
class Token:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower().replace("\u2019", "'")


def tokenize(text: str, offset: int = 0) -> list[Token]:
    """Words, contraction parts ('m, n't) and punctuation, with offsets into the original text."""
    out = []
    for m in TOKEN_RE.finditer(text):
        word = m.group(0)
        low = word.lower()
        if low in ("im", "ive"):  # common typing without the apostrophe
            out += [Token(word[0], offset + m.start(), offset + m.start() + 1),
                    Token("'m" if low == "im" else "'ve", offset + m.start() + 1, offset + m.end())]
            continue
        out.append(Token(word, offset + m.start(), offset + m.end()))
    return out


def lemma(word: str) -> str:
    """Base form of a verb form (irregular list, then -ied/-ed/-es/-s rules against known verbs)."""
    w = word.lower()
    irregular = lexicon.irregular()
    if w in irregular:
        return irregular[w]
    known = lexicon.words("common_verbs") | lexicon.irregular_bases()
    if w in known:
        return w
    candidates: list[str] = []
    if w.endswith("ied"):
        candidates.append(w[:-3] + "y")
    if w.endswith("ed"):
        candidates += [w[:-1], w[:-2], w[:-3] if len(w) > 4 and w[-3] == w[-4] else w[:-2]]
    if w.endswith("ing"):
        candidates += [w[:-3], w[:-3] + "e", w[:-4] if len(w) > 5 and w[-4] == w[-5] else w[:-3]]
    if w.endswith("ies"):
        candidates.append(w[:-3] + "y")
    if w.endswith("es"):
        candidates += [w[:-2], w[:-1]]
    if w.endswith("s") and not w.endswith("ss"):
        candidates.append(w[:-1])
    for c in candidates:
        if c in known:
            return c
    if w.endswith("es") and not re.search(r"(?:s|sh|ch|x|z|o)es$", w):
        return w[:-1]
    return candidates[0] if candidates else w


def is_past_form(word: str) -> bool:
    w = word.lower()
    if w in lexicon.irregular() and w not in lexicon.irregular_bases():
        return True
    return len(w) > 4 and w.endswith("ed")


def is_verb_form(word: str) -> bool:
    """Whether a word can be a finite or -ing verb form (known verbs, irregular forms, -ed)."""
    w = word.lower()
    if w in lexicon.irregular() or is_past_form(w):
        return True
    return lemma(w) in lexicon.words("common_verbs") | lexicon.irregular_bases()


def third_singular(base: str) -> str:
    """'live' -> 'lives', 'watch' -> 'watches', 'study' -> 'studies', 'have' -> 'has'."""
    special = lexicon.mapping("verbs_3sg")
    if base in special:
        return special[base]
    if re.search(r"(s|sh|ch|x|z|o)$", base):
        return base + "es"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ies"
    return base + "s"


@dataclass
class Clause:
    """One clause of the user's own words, analysed."""

    text: str  # the original text of the clause (evidence)
    start: int
    end: int
    tokens: list[Token]
    subject: str = "none"  # i | we | with | my | pronoun | third | none | implicit
    subject_tokens: list[Token] = field(default_factory=list)
    head: Optional[str] = None  # head noun of a 'my ...' subject (canonical), or of the antecedent
    head_kind: Optional[str] = None  # family | people | pets | possessions | self_attributes | other
    name: Optional[str] = None  # a name given with the subject ("my son Leo")
    mood: str = "statement"  # statement | question | imperative | hypothetical | fragment
    negated: bool = False
    no_longer: bool = False  # anymore, no longer, after all
    modal: Optional[str] = None
    tense: str = "present"  # present | past | future | perfect
    progressive: bool = False
    copula: bool = False
    verb: Optional[Token] = None
    verb_lemma: str = ""
    vp_start: int = 0  # token index where the verb group starts (after the subject)
    rest_start: int = 0  # token index of the complement (after the verb or copula)
    correction: bool = False  # opened by "actually", "turns out", ...
    retracts_previous: bool = False  # opened by "wait, no", "scratch that"
    time: Optional[TimePhrase] = None
    contrast_old: Optional[str] = None  # "X, not Y": Y
    from_old: Optional[str] = None  # "from X to Y": X
    inherited: bool = False
    source: Optional[str] = None  # the user's words when ``text`` is a reordered form of them

    @property
    def rest(self) -> str:
        """The complement's original text (after the verb or copula)."""
        if self.rest_start >= len(self.tokens):
            return ""
        return self.text[self.tokens[self.rest_start].start - self.start:].strip()

    @property
    def rest_low(self) -> str:
        return self.rest.lower().replace("\u2019", "'")

    def words_low(self) -> list[str]:
        return [t.low for t in self.tokens]

    @property
    def first_person(self) -> bool:
        return self.subject in ("i", "we", "with", "implicit")

    @property
    def about_user(self) -> bool:
        """The user, or someone or something of theirs ("my son", "my laptop")."""
        return self.first_person or self.subject in ("my", "pronoun")


def _match_phrase(tokens: list[Token], i: int, phrases: frozenset[str], max_len: int = 4) -> int:
    """Length (in tokens) of the longest phrase from ``phrases`` starting at token i, else 0."""
    for n in range(min(max_len, len(tokens) - i), 0, -1):
        if " ".join(t.low for t in tokens[i:i + n]).replace(" '", "'") in phrases:
            return n
    return 0


def strip_fillers(c: Clause, i: int) -> int:
    """Skip opening fillers ("btw", "oh and", "actually,"), noting corrections and take-backs."""
    fillers = lexicon.mapping("fillers")
    while i < len(c.tokens):
        n = _match_phrase(c.tokens, i, lexicon.words("self_corrections"))
        if n:
            c.retracts_previous = True
            i += n
        elif c.tokens[i].low in (",", ":", "-", "–", "—", "!", ".", "…"):
            i += 1
        else:
            n = _match_phrase(c.tokens, i, frozenset(fillers))
            if not n:
                return i
            phrase = " ".join(t.low for t in c.tokens[i:i + n]).replace(" '", "'")
            if fillers[phrase] == "correction":
                c.correction = True
            # a filler word that is the subject or verb ("so I", "no longer") is not skipped
            if phrase == "no" and i + 1 < len(c.tokens) and c.tokens[i + 1].low == "longer":
                return i
            i += n
    return i


def _head_kind(tokens: list[Token], i: int) -> tuple[int, Optional[str], Optional[str]]:
    """Find the head noun of a possessive NP starting at token i: (index after head, head, kind)."""
    for j in range(i, min(i + 4, len(tokens))):
        if tokens[j].low in ("favourite", "favorite", "fave"):
            k = j + 1
            while k < len(tokens) and tokens[k].low not in BE and k < j + 4:
                k += 1
            return k, " ".join(t.low for t in tokens[j:k]), "self_attributes"
        for kind in ("family", "people", "pets", "possessions", "self_attributes"):
            n = _match_phrase(tokens, j, lexicon.words(kind), 3)
            if n:
                phrase = " ".join(t.low for t in tokens[j:j + n]).replace(" '", "'")
                return j + n, lexicon.mapping(kind)[phrase], kind
        if tokens[j].low in BE or tokens[j].low in HAVE or tokens[j].low in MODALS:
            break
    return i + 1, tokens[i].low if i < len(tokens) else None, "other"


def _is_name(tok: Token) -> bool:
    return tok.text[:1].isupper() and tok.text.isalpha() and tok.low not in lexicon.words("common_verbs") \
        and tok.low not in BE and tok.low not in ("i", "and", "is", "has")


def read_subject(c: Clause, i: int) -> int:
    """Read the subject at token i; returns the index of the verb group."""
    toks = c.tokens
    if i >= len(toks):
        c.subject = "none"
        return i
    low = toks[i].low
    # "my husband Tom and I", "Sam and I", "me and my sister"
    for j in range(i + 1, min(i + 6, len(toks) - 1)):
        if toks[j].low == "and" and toks[j + 1].low in ("i", "me"):
            if (low in ("my", "our") or _is_name(toks[i])) and not any(is_verb_form(t.low) and not _is_name(t) for t in toks[i + 1:j]):
                c.subject, c.subject_tokens = "with", toks[i:j]
                if low in ("my", "our"):
                    _, c.head, c.head_kind = _head_kind(toks, i + 1)
                return j + 2
            break
    if low == "me" and i + 1 < len(toks) and toks[i + 1].low == "and":
        k = i + 2
        while k < len(toks) and not (toks[k].low in BE or toks[k].low in HAVE or is_verb_form(toks[k].low)) and k < i + 6:
            k += 1
        c.subject, c.subject_tokens = "with", toks[i + 2:k]
        return k
    if low in SUBJECT_I:
        c.subject = "i"
        return i + 1
    if low in SUBJECT_WE:
        c.subject = "we"
        return i + 1
    if low in ("my", "our"):
        k, c.head, c.head_kind = _head_kind(toks, i + 1)
        while k < len(toks) and c.head_kind != "other" and toks[k].low.isalpha() and not _is_name(toks[k]) \
                and toks[k].low not in STOPWORDS and not find_time(toks[k].text) \
                and toks[k].low not in set(BE) | HAVE | MODALS | NEGATORS | {"and", "'s"} and not is_verb_form(toks[k].low):
            c.head, c.head_kind = toks[k].low, "other"  # "our team standup": the head is the last noun
            k += 1
        if k < len(toks) and _is_name(toks[k]):
            c.name = toks[k].text
            k += 1
        if k + 2 < len(toks) and toks[k].low == "'s" and toks[k + 1].low == "name":
            k += 2  # "my wife's name is Priya"
            c.subject, c.subject_tokens = "my", toks[i:k]
            return k
        c.subject, c.subject_tokens = "my", toks[i:k]
        return k
    if low in PRONOUNS:
        c.subject, c.subject_tokens = "pronoun", toks[i:i + 1]
        return i + 1
    if low in THIRD or low in QUESTION_WORDS:
        c.subject = "third"
        return i + 1
    return i


def read_verb_group(c: Clause, i: int) -> int:
    """Auxiliaries, negation, modality and adverbs, then the main verb or the copula."""
    toks = c.tokens
    be_seen = have_seen = False
    while i < len(toks):
        low = toks[i].low
        nxt = toks[i + 1].low if i + 1 < len(toks) else ""
        if low in NEGATORS:
            c.negated = True
            if low == "no" and nxt == "longer":
                c.no_longer = True
                i += 1
            elif low == "no":
                break  # "I have no pets": a determiner, handled by the predicate
        elif low in ("do", "does", "did") and nxt in ("n't", "not", "never"):
            c.tense = "past" if low == "did" else c.tense
        elif low in ("'d", "had") and nxt == "been":
            have_seen = True
            c.tense = "perfect"
        elif low in MODALS:
            if low in ("will", "'ll", "wo"):
                c.tense = "future"
            else:
                c.modal = {"ca": "can", "'d": "would"}.get(low, low)
        elif low in BE:
            if low == "'s" and c.subject in ("i", "we"):
                break
            if low == "been" and have_seen:
                c.tense = "perfect"
            elif low in ("was", "were"):
                c.tense = "past"
            be_seen = True
            if nxt == "going" and i + 2 < len(toks) and toks[i + 2].low == "to":
                c.tense = "future"
                i += 3
                continue
        elif low in HAVE and not be_seen:
            if nxt in ("got", "gotten") and (i + 2 >= len(toks) or not is_past_form(toks[i + 2].low) or toks[i + 2].low in lexicon.words("conditions")):
                c.verb, c.verb_lemma, c.rest_start = toks[i + 1], "have", i + 2
                c.vp_start = c.vp_start or i
                return i + 2
            if nxt in ("been",) or is_past_form(nxt) or nxt in lexicon.irregular() or nxt in ADVERBS or nxt in NEGATORS:
                have_seen = True
                c.tense = "past" if low == "had" else "perfect"
            else:
                c.verb, c.verb_lemma, c.rest_start = toks[i], "have", i + 1
                c.tense = "past" if low == "had" else c.tense
                return i + 1
        elif low in ADVERBS or (low.endswith("ly") and len(low) > 4 and low not in ("family", "italy", "july", "fly", "rely", "reply", "apply", "supply")):
            pass
        elif low in ("any", "anymore") and (low == "anymore" or nxt == "more"):
            c.no_longer = True
        else:
            break
        i += 1
    if i < len(toks) and be_seen and toks[i].low.endswith("ing") and len(toks[i].low) > 4:
        c.progressive = True
        c.verb, c.verb_lemma, c.rest_start = toks[i], lemma(toks[i].low), i + 1
    elif be_seen:
        c.copula, c.verb_lemma, c.rest_start = True, "be", i
    elif i < len(toks):
        c.verb, c.verb_lemma, c.rest_start = toks[i], lemma(toks[i].low), i + 1
        if c.tense == "present" and is_past_form(toks[i].low) and not have_seen:
            c.tense = "past"
    else:
        c.rest_start = i
    return i


CONTRAST_RE = re.compile(r"^(?P<new>.*?\S)\s*,?\s+(?:and\s+)?(?:not|instead of|rather than)\s+(?P<old>[^,.;!]+?)\s*(?:[,.;!].*)?$", re.I)
FROM_TO_RE = re.compile(r"^from\s+(?P<old>.+?)\s+(?:to|for)\s+(?P<new>.+)$", re.I)
NO_LONGER_RE = re.compile(r"\b(?:any ?more|no longer|after all|at all)\b", re.I)


def _mood(c: Clause, start: int, sentence_question: bool) -> str:
    toks = c.tokens
    if start >= len(toks):
        return "fragment"
    first = toks[start].low
    words = " " + " ".join(t.low for t in toks).replace(" '", "'") + " "
    if first in QUESTION_WORDS or (first in QUESTION_AUX and start + 1 < len(toks) and toks[start + 1].low in ("i", "you", "we", "it", "there", "he", "she", "they", "my", "your", "this", "that", "n't")):
        return "question"
    if first in ("if", "unless", "suppose", "imagine", "pretend", "whether") or any(f" {h} " in words for h in lexicon.words("hedges")):
        return "hypothetical"
    if sentence_question and first not in ("i", "we", "my", "our"):
        return "question"
    return "statement"


def analyse(text: str, start: int, sentence_question: bool = False, inherit: Optional[Clause] = None) -> Clause:
    """Analyse one clause (``text`` is the original text at offset ``start``)."""
    tokens = tokenize(text, start)
    c = Clause(text=text, start=start, end=start + len(text), tokens=tokens)
    i = strip_fillers(c, 0)
    c.mood = _mood(c, i, sentence_question)
    j = read_subject(c, i)
    if c.subject == "none" and inherit is not None and i < len(tokens):
        for name in ("subject", "subject_tokens", "head", "head_kind", "name"):
            setattr(c, name, getattr(inherit, name))
        c.inherited = True
        if not is_verb_form(tokens[i].low) and tokens[i].low not in BE and tokens[i].low not in MODALS \
                and tokens[i].low not in NEGATORS and tokens[i].low not in HAVE:
            c.copula, c.verb_lemma, c.rest_start, c.vp_start = True, "be", i, i
            c.tense = inherit.tense if inherit.copula else "present"
            _finish(c)
            return c
    while c.subject == "none" and i + 1 < len(tokens) and (tokens[i].low in ADVERBS or tokens[i].low.endswith("ly")):
        i += 1  # "Finally finished ...": an adverb before a diary-style verb
    if c.subject == "none" and i < len(tokens):
        first = tokens[i].low
        if c.mood == "statement":
            if is_past_form(first) and lemma(first) not in lexicon.words("mental_verbs") | {"be"}:
                c.subject, j = "implicit", i
            elif inherit is None and first.endswith("ing") and i + 1 < len(tokens) and tokens[i + 1].low in ("as", "at", "on", "in", "for", "with") \
                    and lemma(first) in lexicon.words("common_verbs"):
                c.subject, j = "implicit", i  # "Working as a barista ...": a diary-style progressive
                c.progressive, c.verb, c.verb_lemma, c.rest_start, c.vp_start = True, tokens[i], lemma(first), i + 1, i
                _finish(c)
                return c
            elif first in lexicon.words("imperative_verbs") or first in ("please", "pls", "don't", "do"):
                c.mood = "imperative"
            else:
                c.mood = "fragment"
    c.vp_start = j
    if c.subject != "none" and c.subject != "third":
        read_verb_group(c, j)
    _finish(c)
    return c


def _finish(c: Clause) -> None:
    c.time = find_time(c.text)
    if NO_LONGER_RE.search(c.text):
        c.no_longer = True
    if c.mood == "statement" and c.modal in HEDGE_MODALS:
        c.mood = "hypothetical"
    rest = c.rest
    m = FROM_TO_RE.match(rest)
    if m:
        c.from_old = m.group("old").strip()
    m = CONTRAST_RE.match(rest)
    if m and not c.negated:
        c.contrast_old = re.sub(r"^(?:a|an|the|my)\s+", "", m.group("old").strip(), flags=re.I)

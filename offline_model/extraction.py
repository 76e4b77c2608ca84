"""The rule-based memory extractor: first-person statements in the USER's words -> memory facts.

Why rules: the offline model has no language model, yet the lab's memory backends need
plausible, *conservative* extraction to be demonstrable offline. Precision over recall: a clause
is stored only when it matches one of a small set of general first-person patterns (identity,
residence, job/employer, diet, allergies, family, pets, possessions, preferences, projects,
procedural instructions, time-bound states), and everything that looks like small talk, a
question, a request, a hedge, pasted/quoted content or a secret is skipped before matching.

Every fact has ONE canonical third-person content template per attribute family (e.g.
"User lives in Pune."), and existing memories are read back by turning that third-person text
into first person and running the very same patterns (``parse_memory``), so an update finds the
memory about the same attribute.
"""

from __future__ import annotations

import calendar
import datetime as dt
import html
import json
import re
from dataclasses import dataclass, replace
from typing import Callable, Optional

from .textutil import normalise_quotes, sentence_spans

I_AM = r"i(?:'m| am|m)"
I_HAVE = r"i(?:'ve| have)"


@dataclass
class Fact:
    """One extracted (or parsed) memory fact."""

    key: str  # attribute identity, e.g. "residence", "pref:coffee"
    kind: str  # semantic | episodic | procedural
    content: str  # canonical third-person statement
    importance: float
    single: bool  # single-valued attribute: a new value replaces the old one
    value: str = ""
    evidence: str = ""
    expires_in_days: Optional[int] = None
    negated: bool = False  # "I'm not X anymore": a retraction
    denial: bool = False  # "I'm not X, that's my brother": retracts only a memory with the same value


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
        return {
            "op": self.op,
            "ref": self.ref,
            "kind": self.kind,
            "content": self.content,
            "importance": self.importance,
            "expires_in_days": self.expires_in_days,
            "evidence": self.evidence,
        }


# ---------------------------------------------------------------------------------------------
# Filters: what is never stored

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
HEDGE_RE = re.compile(
    r"\b(maybe|might|perhaps|probably|possibly|i think|i guess|i suppose|i believe|not sure|unsure|"
    r"thinking (?:about|of)|considering|could be|kind of|sort of|wondering|i wonder|may be|not certain|"
    r"iirc|if i remember|i'd say|i feel like|hopefully|i hope|i wish|if i|in case)\b",
    re.I,
)
QUESTION_START_RE = re.compile(
    r"^(what|what's|how|how's|why|when|where|where's|who|who's|which|whose|do|does|did|are|is|was|were|can|could|"
    r"would|will|should|shall|may|have you|has|had|isn't|aren't|don't you|won't)\b",
    re.I,
)
REQUEST_START_RE = re.compile(
    r"^(please|pls|can you|could you|would you|will you|tell me|show me|give me|help me|help|let's|lets|let me|"
    r"write|make|create|find|explain|remind me|book|send|check|draft|summari[sz]e|translate|list|suggest|"
    r"recommend|plan|compare|describe|generate|calculate|search|look up|i need you|i want you|i'd like|"
    r"i would like|i'd love|i would love|i want to know|i was wondering|remember to|don't forget|forget|delete|"
    r"go ahead|try|imagine|pretend|ignore|thanks|thank you|thx|ty|hi|hello|hey|good morning|good night|"
    r"good evening|bye|goodbye|ok|okay|cool|great|nice|awesome|sure|yes|yeah|yep|no|nope|lol|haha|hmm|wow)\b",
    re.I,
)
THIRD_PARTY_RE = re.compile(r"\b(the user|the assistant|this user|the ai|the model|system prompt)\b", re.I)
LEAD_FILLER_RE = re.compile(
    r"^(?:(?:actually|oh|also|btw|by the way|fyi|just so you know|for the record|for context|well|so|and|but|"
    r"anyway|anyways|ok so|okay so|um|uh|yeah|correction|update|quick update|just fyi|remember that|"
    r"note that|please note that|please remember that|keep in mind that|oh and|oh also|also note|"
    r"to be clear|honestly|in fact|as it happens|these days|nowadays|currently|now)\s*[,:-]?\s+)+",
    re.I,
)
TRAIL_FILLER_RE = re.compile(
    r"(?:\s*,?\s*(?:now|anymore|any more|these days|nowadays|too|as well|actually|btw|by the way|though|lol|haha|"
    r"currently|at the moment|right now|for what it's worth|if that matters|fwiw|in case you wondered|"
    r"for context|just so you know|fyi|by now|already|full[- ]time|again|instead|recently|last (?:year|month|week|summer|winter)|"
    r"(?:a (?:few |couple of )?|\d+ |two |three )(?:years?|months?|weeks?|days?) ago|in (?:19|20)\d\d))+\s*[.!]*$",
    re.I,
)
PASTE_MARKER_RE = re.compile(
    r"(here(?:'s| is| are)\s+(?:the|an?|my|his|her|their|our|that|this|some|what)\b[^:\n]{0,60}:|"
    r"\b(?:see|read)\s+(?:the\s+|this\s+)?(?:below|following)[^:\n]{0,40}:|"
    r"-{3,}\s*forwarded message|begin forwarded message|-{2,}\s*original message|```|"
    r"\b(?:wrote|said|says|writes|posted|texted|sent me|emailed me|messaged me)\s*:|"
    r"\b(?:email|e-mail|message|text|document|doc|letter|note|memo|transcript|article|post|review)\s*:)",
    re.I,
)
HEADER_LINE_RE = re.compile(r"^\s*(from|to|subject|date|cc|bcc|sent|reply-to|re|fwd)\s*:", re.I | re.M)

TIME_RE = re.compile(
    r"\b(today|tonight|tomorrow|this (?:week|weekend|month|morning|afternoon|evening|year|summer|winter|spring|fall|autumn)|"
    r"next (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:until|till|til|through) (?:the end of (?:the |this |next )?(?:week|month|year)|"
    r"(?:next )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|tonight|"
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december) \d{1,2}(?:st|nd|rd|th)?|"
    r"the \d{1,2}(?:st|nd|rd|th)?)|"
    r"for (?:the )?(?:next )?(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|couple of) "
    r"(?:days?|weeks?|months?|nights?)|"
    r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|over the weekend|later today|"
    r"in (?:\d+|a|an|one|two|three|a few|a couple of) (?:days?|weeks?))\b",
    re.I,
)

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = [m.lower() for m in calendar.month_name if m]
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "a few": 3, "a couple of": 2, "couple of": 2}

PRONOUN_OBJECT_RE = re.compile(
    r"^(it|that|this|these|those|them|you|your|yours|him|her|the idea|the suggestion|the plan|how|what|when|if|"
    r"whatever|everything|nothing|something|anything|one|ones)\b",
    re.I,
)
JOBS = set(
    """engineer developer programmer coder designer teacher nurse doctor physician surgeon dentist lawyer attorney
    accountant architect scientist researcher student professor lecturer manager consultant analyst writer author
    journalist editor chef cook baker farmer pilot driver mechanic electrician plumber carpenter artist musician
    photographer pharmacist therapist psychologist psychiatrist veterinarian vet firefighter officer soldier librarian
    cashier waiter waitress bartender entrepreneur founder freelancer translator economist paramedic intern barista
    tutor coach trainer clerk secretary salesperson marketer recruiter administrator technician mathematician
    statistician biologist chemist physicist professional nanny caregiver receptionist banker broker investor
    producer director actor actress dancer singer composer illustrator animator tester sysadmin devops
    radiologist midwife optometrist dietitian nutritionist counselor counsellor social-worker policeman
    policewoman judge paralegal realtor agent auditor cto ceo cfo vp pm""".split()
)
DIETS = r"vegetarian|vegan|pescatarian|pescetarian|keto|paleo|carnivore|halal|kosher|flexitarian|plant-based"
FAMILY = (
    r"wife|husband|partner|spouse|girlfriend|boyfriend|fianc[eé]e?|sons?|daughters?|kids?|child|children|bab(?:y|ies)|"
    r"brothers?|sisters?|siblings?|mother|father|mom|dad|mum|twins?|grandsons?|granddaughters?|grandchildren|"
    r"stepsons?|stepdaughters?|nieces?|nephews?|grandmother|grandfather|grandma|grandpa"
)
PETS = (
    r"dogs?|cats?|pupp(?:y|ies)|kittens?|parrots?|hamsters?|rabbits?|bunn(?:y|ies)|fish|goldfish|turtles?|"
    r"tortoises?|horses?|guinea pigs?|snakes?|lizards?|birds?|ferrets?|budgies?|geckos?|chickens?"
)
POSSESSIONS = set(
    """car bike bicycle motorbike motorcycle scooter laptop computer pc mac macbook phone iphone smartphone tablet ipad
    house home apartment flat condo cabin boat piano guitar violin drum drums camera kindle tesla truck van
    garden pool treadmill""".split()
)
SPOUSES = {"wife", "husband", "partner", "spouse", "girlfriend", "boyfriend", "fiance", "fiancee", "fiancé", "fiancée"}
ATTR_STOP = set(
    """question point problem issue guess bet concern request idea suggestion answer thought thoughts opinion day week
    weekend morning evening night afternoon bad pleasure turn fault mistake head back stomach mind heart life feeling
    feelings understanding impression reply response message email text god gosh goodness apologies condolences
    experience take hope wish fear worry excuse reason point whole""".split()
)
VALUE_STOP_RE = re.compile(
    r"^(so|very|really|too|kind|sort|pretty|quite|not|a bit|a little|killing|being|getting|going|great|fine|good|ok|"
    r"okay|bad|awful|terrible|amazing|nice|busy|tired|hard|tough|crazy|weird|boring|fun|cool|done|over|here|there|"
    r"coming|almost|still|just|gone|dead|sick|back|late|early|in|at|on|off|up|down|that|this|it|what|how|why|"
    r"broken|acting|making|driving|the same|like)\b",
    re.I,
)
EVENT_NOUNS = (
    r"meeting|appointment|interview|exam|test|deadline|flight|trip|presentation|date|party|wedding|surgery|"
    r"call|conference|class|lesson|game|match|concert|recital|shift|review|demo|launch|visit|vacation|holiday|"
    r"checkup|check-up|operation|race|marathon|performance|audition|reunion|ceremony|workshop|training|course"
)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _clean_value(value: str) -> str:
    """Trim trailing fillers/punctuation from a captured value."""
    v = value.strip()
    v = re.split(r"\s*,\s*(?:which|who|where|so|because|since|but|and i|if|as|though|btw)\b|\s+(?:because|since|so that|but)\s+", v, maxsplit=1, flags=re.I)[0]
    prev = None
    while prev != v:
        prev = v
        v = TRAIL_FILLER_RE.sub("", v).strip()
        v = v.rstrip(" .!,;:")
    return v


def _norm_key(value: str) -> str:
    v = re.sub(r"^(?:a|an|the|my|some)\s+", "", value.lower())
    return re.sub(r"[^a-z0-9]+", " ", v).strip()


def _ok_value(value: str, max_words: int = 8) -> bool:
    words = value.split()
    return 0 < len(words) <= max_words and not PRONOUN_OBJECT_RE.match(value)


def _cap(value: str) -> str:
    return value[:1].upper() + value[1:] if value else value


# ---------------------------------------------------------------------------------------------
# Patterns. Each rule: (regex over the cleaned first-person clause, builder(match) -> Fact | None).

Builder = Callable[[re.Match], Optional[Fact]]
RULES: list[tuple[re.Pattern, Builder]] = []


def rule(pattern: str) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        RULES.append((re.compile(pattern, re.I), fn))
        return fn

    return deco


def sem(key: str, content: str, importance: float, single: bool, value: str = "") -> Fact:
    return Fact(key=key, kind="semantic", content=content, importance=importance, single=single, value=value)


def proc(key: str, content: str, value: str = "") -> Fact:
    return Fact(key=key, kind="procedural", content=content, importance=0.7, single=True, value=value)


# procedural instructions -------------------------------------------------------------------
@rule(r"^(?:please\s+)?(?:(?:always|just|from now on,?|going forward,?)\s+)?(?:call me|address me as|refer to me as)\s+(?P<x>.+)$")
def _call_me(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    return proc("proc:callme", f"User wants to be called {x}.", x) if _ok_value(x, 4) else None


@rule(r"^(?:please\s+)?(?:(?:always|from now on,?|going forward,?|only)\s+)?(?:please\s+)?(?:answer|respond|reply|write|talk|speak)(?:\s+to me)?(?:\s+only)?\s+in\s+(?P<x>[A-Za-z][\w -]*)$")
def _language(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    return proc("proc:language", f"User wants replies in {_cap(x)}.", x) if _ok_value(x, 3) else None


@rule(r"^(?:from now on|going forward|moving forward|in (?:the )?future|for all future (?:answers|replies|chats)|whenever you (?:answer|reply|respond)),?\s+(?:please\s+)?(?P<x>(?!i\b|i'|we\b|my\b).+)$")
def _from_now_on(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    x = re.sub(r"^you\s+(?:should|must|need to|have to)\s+", "", x, flags=re.I)
    if not _ok_value(x, 12) or x.endswith("?"):
        return None
    inner = match_clause(x)
    if inner is not None and inner.kind == "procedural":
        return inner
    return proc("proc:" + _norm_key(x), f"User wants the assistant to {x[0].lower() + x[1:]}.", x)


@rule(r"^(?:please\s+)?(?P<adv>always|never)\s+(?P<x>(?!mind\b|again\b|happy\b|glad\b|fun\b|ever\b)[a-z][\w' -]*)$")
def _always(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    if not _ok_value(x, 12):
        return None
    return proc("proc:" + _norm_key(x), f"User wants the assistant to {m['adv'].lower()} {x}.", x)


@rule(r"^(?:please\s+)?keep (?:your |the )?(?:answers|responses|replies)\s+(?P<x>.+)$")
def _keep_answers(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    return proc("proc:style", f"User wants answers kept {x}.", x) if _ok_value(x, 6) else None


@rule(r"^i (?:prefer|like|want) (?P<x>(?:[\w-]+ ){0,3}(?:answers|responses|replies|explanations))(?P<rest>\b.*)$")
def _style(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] + m["rest"])
    return proc("proc:style", f"User prefers {x}.", x) if _ok_value(x, 8) else None


@rule(r"^user wants (?:the assistant )?to be called (?P<x>.+)$")
def _p_callme(m: re.Match) -> Optional[Fact]:
    return _call_me(m)


@rule(r"^user wants replies in (?P<x>.+)$")
def _p_language(m: re.Match) -> Optional[Fact]:
    return _language(m)


@rule(r"^user wants the assistant to (?P<adv>always|never) (?P<x>.+)$")
def _p_always(m: re.Match) -> Optional[Fact]:
    return _always(m)


@rule(r"^user wants the assistant to (?P<x>.+)$")
def _p_fno(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    return proc("proc:" + _norm_key(x), f"User wants the assistant to {x}.", x)


@rule(r"^user wants answers kept (?P<x>.+)$")
def _p_keep(m: re.Match) -> Optional[Fact]:
    return _keep_answers(m)


# identity ------------------------------------------------------------------------------------
@rule(r"^(?:my name(?:'s| is)|" + I_AM + r" called|people call me|everyone calls me)\s+(?P<x>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*){0,2})$")
def _name(m: re.Match) -> Optional[Fact]:
    x = _cap(_clean_value(m["x"]))
    return sem("name", f"User's name is {x}.", 0.8, True, x) if x else None


@rule(r"^" + I_AM + r" (?P<x>\d{1,3})(?: (?:years|yrs|year)(?: old)?| y/?o)?$")
def _age(m: re.Match) -> Optional[Fact]:
    n = int(m["x"])
    return sem("age", f"User is {n} years old.", 0.6, True, str(n)) if 5 <= n <= 120 else None


@rule(r"^(?:i|we) (?:currently |now |still )?(?:live|reside) in (?P<x>.+)$|^(?:i|we)(?:'ve| have)? (?:just |recently |finally )?(?:moved|relocated) (?:to|back to) (?P<y>.+)$|^" + I_AM + r" (?:now |currently )?(?:based|living|located) in (?P<z>.+)$|^(?:our|my) (?:home|house) is (?:now )?in (?P<w>.+)$")
def _residence(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["y"] or m["z"] or m["w"])
    if not _ok_value(x, 6) or TIME_RE.search(x) or re.match(r"^(a|an|the same|with)\b", x, re.I):
        return None
    return sem("residence", f"User lives in {x}.", 0.8, True, x)


@rule(r"^" + I_AM + r" (?:originally )?from (?P<x>.+)$|^i (?:grew up|was raised) in (?P<y>.+)$|^my home ?town is (?P<z>.+)$|^user is from (?P<w>.+)$")
def _origin(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["y"] or m["z"] or m["w"])
    return sem("origin", f"User is from {x}.", 0.7, True, x) if _ok_value(x, 6) else None


@rule(r"^i was born (?:in|on) (?P<x>.+)$")
def _born(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    if not _ok_value(x, 5):
        return None
    if re.search(r"\d", x):
        return sem("birth", f"User was born in {x}.", 0.6, True, x)
    return sem("origin", f"User is from {x}.", 0.7, True, x)


@rule(r"^i (?:work|am working|'m working) (?:at|for) (?P<x>.+)$|^" + I_AM + r" (?:employed|working) (?:at|by|for) (?P<y>.+)$|^user works at (?P<z>.+)$")
def _employer(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["y"] or m["z"])
    if not _ok_value(x, 6) or re.match(r"^(home|a living|myself)\b", x, re.I):
        return None
    return sem("employer", f"User works at {x}.", 0.7, True, x)


def _job_fact(x: str) -> Optional[Fact]:
    x = re.sub(r"^(?:a|an)\s+", "", _clean_value(x), flags=re.I)
    x = re.sub(r"\s+by (?:profession|trade)$", "", x, flags=re.I)
    x = re.sub(r"\s+(?:at|for|with|in|on) .+$", "", x, flags=re.I)
    words = x.lower().split()
    if not words or len(words) > 4 or words[-1] not in JOBS:
        return None
    return sem("job", f"User works as {_article(x)} {x}.", 0.7, True, x)


@rule(r"^i work as (?P<x>.+)$|^" + I_AM + r" (?:a|an) (?P<y>(?:[\w-]+ ){0,3}[\w-]+?(?: (?:at|for|with|in|on) [\w' -]{1,60})?)(?: by (?:profession|trade))?$|^my (?:job|profession|occupation|role) is (?P<z>.+)$|^i(?:'m| am) employed as (?P<w>.+)$")
def _job(m: re.Match) -> Optional[Fact]:
    return _job_fact(m["x"] or m["y"] or m["z"] or m["w"])


@rule(r"^" + I_AM + r" (?:now )?(?P<x>retired|unemployed|self-employed|a stay-at-home (?:mom|dad|parent))$")
def _job_status(m: re.Match) -> Optional[Fact]:
    x = m["x"].lower()
    return sem("job", f"User is {x}.", 0.7, True, x)


@rule(r"^" + I_AM + r" (?:now )?(?P<x>married|single|divorced|engaged|widowed|separated)(?: to (?P<who>[A-Z]\w+))?$")
def _marital(m: re.Match) -> Optional[Fact]:
    x = m["x"].lower()
    who = f" to {m['who']}" if m["who"] else ""
    return sem("marital", f"User is {x}{who}.", 0.7, True, x)


# diet / health --------------------------------------------------------------------------------
@rule(r"^" + I_AM + r" (?:a |an )?(?:strict |fully |mostly )?(?P<x>" + DIETS + r")\b(?: now)?$")
def _diet(m: re.Match) -> Optional[Fact]:
    x = m["x"].lower()
    return sem("diet", f"User is {x}.", 0.8, True, x)


@rule(r"^i (?:follow|eat|am on|'m on) (?:a |an )?(?P<x>(?:[\w-]+ ){0,2}?(?:" + DIETS + r"|low-carb|low carb|gluten-free|dairy-free))(?: diet)?$")
def _diet2(m: re.Match) -> Optional[Fact]:
    x = m["x"].lower()
    return sem("diet", f"User is {x}.", 0.8, True, x) if re.fullmatch(DIETS, x) else None


@rule(r"^i (?:don't|do not|never|can't|cannot) eat (?P<x>.+)$|^user does not eat (?P<y>.+)$")
def _avoid(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["y"])
    if not _ok_value(x, 5):
        return None
    return sem("avoid:" + _norm_key(x), f"User does not eat {x}.", 0.7, False, x)


@rule(r"^" + I_AM + r" (?:severely |very |deathly |highly |mildly |a bit |slightly )?(?:allergic|intolerant) to (?P<x>.+)$|^i have (?:a |an )?(?:severe |mild )?(?P<y>[\w -]+?) (?:allergy|intolerance)$|^user is allergic to (?P<z>.+)$")
def _allergy(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["y"] or m["z"])
    if not _ok_value(x, 5):
        return None
    return sem("allergy:" + _norm_key(x), f"User is allergic to {x}.", 0.9, False, x)


@rule(r"^" + I_AM + r" (?P<x>lactose[- ]intolerant|gluten[- ]intolerant|diabetic|celiac|coeliac)$")
def _condition(m: re.Match) -> Optional[Fact]:
    x = m["x"].lower()
    return sem("condition:" + _norm_key(x), f"User is {x}.", 0.8, False, x)


# family, pets, possessions ---------------------------------------------------------------------
NUM = r"(?:a|an|one|two|three|four|five|six|\d)"


@rule(r"^i have (?P<n>" + NUM + r") (?:(?:little|baby|older|younger|big|twin|teenage|grown-up|adult|[\d]+[- ]year[- ]old) )?(?P<rel>" + FAMILY + r")(?: (?:named|called) (?P<name>[A-Z][\w'-]*(?: and [A-Z][\w'-]*)?))?$")
def _family(m: re.Match) -> Optional[Fact]:
    rel, n = m["rel"].lower(), m["n"].lower()
    if m["name"]:
        return sem(f"family:{rel}:{m['name'].lower()}", f"User has {n} {rel} named {m['name']}.", 0.7, False, m["name"])
    return sem(f"family:{rel}", f"User has {n} {rel}.", 0.6, False, n)


@rule(r"^my (?P<rel>" + FAMILY + r")(?:'s name is| is (?:named|called)| name is) (?P<name>[A-Z][\w'-]*)$")
def _family_name(m: re.Match) -> Optional[Fact]:
    rel, name = m["rel"].lower(), m["name"]
    return sem(f"family:{rel}:{name.lower()}", f"User has {_article(rel)} {rel} named {name}.", 0.7, False, name)


@rule(r"^i have (?P<n>" + NUM + r") (?P<adj>(?:[\w-]+ ){0,2}?)(?P<pet>" + PETS + r")(?: (?:named|called) (?P<name>[A-Z][\w'-]*(?: and [A-Z][\w'-]*)?))?$")
def _pet(m: re.Match) -> Optional[Fact]:
    pet, n, adj = m["pet"].lower(), m["n"].lower(), (m["adj"] or "").lower()
    if re.search(r"\b(pet|no)\b", adj):
        adj = ""
    if m["name"]:
        return sem(f"pet:{pet}:{m['name'].lower()}", f"User has {n} {adj}{pet} named {m['name']}.", 0.6, False, m["name"])
    return sem(f"pet:{pet}", f"User has {n} {adj}{pet}.", 0.6, False, n)


@rule(r"^my (?P<pet>" + PETS + r")(?:'s name is| is (?:named|called)| name is) (?P<name>[A-Z][\w'-]*)$")
def _pet_name(m: re.Match) -> Optional[Fact]:
    pet, name = m["pet"].lower(), m["name"]
    return sem(f"pet:{pet}:{name.lower()}", f"User has {_article(pet)} {pet} named {name}.", 0.6, False, name)


@rule(r"^i (?P<v>own|have|drive|ride) (?P<n>a|an|two|three|\d) (?P<x>(?:[\w'-]+ ){0,3}[\w'-]+)$")
def _possession(m: re.Match) -> Optional[Fact]:
    v, x = m["v"].lower(), _clean_value(m["x"])
    head = x.lower().split()[-1] if x else ""
    if v == "have" and head not in POSSESSIONS:
        return None
    if v in ("drive", "ride"):
        verb = "drives" if v == "drive" else "rides"
        return sem("vehicle", f"User {verb} {m['n'].lower()} {x}.", 0.5, True, x)
    return sem("own:" + head, f"User owns {m['n'].lower()} {x}.", 0.5, False, x)


@rule(r"^user (?:owns|has) (?P<n>a|an|two|three|\d) (?P<x>.+)$")
def _p_owns(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    head = x.lower().split()[-1] if x else ""
    return sem("own:" + head, f"User owns {m['n'].lower()} {x}.", 0.5, False, x) if head else None


# preferences -----------------------------------------------------------------------------------
POSITIVE = {"like": "likes", "love": "loves", "enjoy": "enjoys", "adore": "adores", "prefer": "prefers"}


@rule(r"^i (?:really |absolutely |totally |just |also |still |do |genuinely |especially |truly |actually |now |kinda )*(?P<v>like|love|enjoy|adore|prefer|hate|dislike|detest|loathe|can't stand|cannot stand|don't like|do not like|don't enjoy|do not enjoy|can't stand) (?P<x>.+)$|^user (?P<v3>likes|loves|enjoys|adores|prefers|dislikes) (?P<x3>.+)$")
def _preference(m: re.Match) -> Optional[Fact]:
    v = (m["v"] or m["v3"]).lower()
    x = _clean_value(m["x"] or m["x3"])
    if not _ok_value(x, 8) or re.match(r"^(to know|to ask|it when|when|if|how|the way you)\b", x, re.I):
        return None
    v = v[:-1] if m["v3"] and v.endswith("s") else v
    key = "pref:" + _norm_key(x)
    if v in POSITIVE:
        return sem(key, f"User {POSITIVE[v]} {x}.", 0.6, True, x)
    return sem(key, f"User dislikes {x}.", 0.6, True, x)


@rule(r"^" + I_AM + r" (?:a |an )?(?:big |huge |massive |real |true |total )?(?:fan of|into) (?P<x>.+)$|^" + I_AM + r" (?:a |an )?(?:big |huge )?(?P<y>[\w-]+) (?:lover|fan|enthusiast|addict|nerd|geek|buff)$")
def _fan(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["y"])
    return sem("pref:" + _norm_key(x), f"User likes {x}.", 0.6, True, x) if _ok_value(x, 6) else None


@rule(r"^my (?:absolute |all-time |all time )?(?:favou?rite|fave) (?P<cat>[\w -]+?) (?:is|are) (?P<x>.+)$|^(?P<x2>[\w' -]+?) (?:is|are) my (?:absolute |all-time )?(?:favou?rite|fave) (?P<cat2>[\w -]+)$|^user's favourite (?P<cat3>[\w -]+?) (?:is|are) (?P<x3>.+)$")
def _favourite(m: re.Match) -> Optional[Fact]:
    cat = _clean_value(m["cat"] or m["cat2"] or m["cat3"]).lower()
    x = _clean_value(m["x"] or m["x2"] or m["x3"])
    if not _ok_value(x, 6) or not cat or len(cat.split()) > 3:
        return None
    verb = "are" if (m["x"] and " are " in m.group(0)) else "is"
    return sem("fav:" + _norm_key(cat), f"User's favourite {cat} {verb} {x}.", 0.6, True, x)


# projects / activities ---------------------------------------------------------------------------
PROJECT_VERBS = r"working on|building|developing|learning|studying|training for|preparing for|writing"


@rule(r"^" + I_AM + r" (?:currently |now |also |still )?(?P<v>" + PROJECT_VERBS + r") (?P<x>.+)$|^user is (?P<v2>" + PROJECT_VERBS + r") (?P<x2>.+)$|^my (?:current |side |main |big )?project is (?P<x3>.+)$")
def _project(m: re.Match) -> Optional[Fact]:
    v = (m["v"] or m["v2"] or "working on").lower()
    x = _clean_value(m["x"] or m["x2"] or m["x3"])
    if not _ok_value(x, 10):
        return None
    if v == "writing" and not re.match(r"^(a|an|my|the)\s+\w+", x, re.I):
        return None
    return sem("project:" + _norm_key(x), f"User is {v} {x}.", 0.6, False, x)


@rule(r"^i (?P<v>speak|play|use|study at|go to|graduated from|attend) (?P<x>.+)$|^user (?P<v2>speaks|plays|uses|studies at|goes to|graduated from|attends) (?P<x2>.+)$")
def _activity(m: re.Match) -> Optional[Fact]:
    v = (m["v"] or "").lower()
    third = {"speak": "speaks", "play": "plays", "use": "uses", "study at": "studies at", "go to": "goes to",
             "graduated from": "graduated from", "attend": "attends"}
    v3 = third.get(v, (m["v2"] or "").lower())
    x = _clean_value(m["x"] or m["x2"])
    if not _ok_value(x, 6):
        return None
    if v3 in ("goes to", "attends") and not re.search(r"\b(school|university|college|academy|institute|gym|church|uni)\b", x, re.I):
        return None
    family = {"speaks": "speaks", "plays": "plays:" + _norm_key(x), "uses": "uses:" + _norm_key(x)}.get(v3, "school")
    return sem(family, f"User {v3} {x}.", 0.5, family in ("speaks", "school"), x)


HOBBY_VERBS = {"collect": "collects", "knit": "knits", "crochet": "crochets", "sew": "sews", "paint": "paints",
               "sketch": "sketches", "restore": "restores", "brew": "brews", "bake": "bakes", "sculpt": "sculpts",
               "embroider": "embroiders", "quilt": "quilts", "whittle": "whittles"}
HOBBY_TAIL_RE = re.compile(r"\s+(?:in my (?:spare|free) time|as a hobby|for fun|on (?:the )?weekends|at weekends)$", re.I)


# simple-present craft/collecting verbs with an object are habits ("I collect X", "I restore X in my spare time")
@rule(r"^i (?P<v>" + "|".join(HOBBY_VERBS) + r") (?P<x>.+)$|^user (?P<v2>" + "|".join(HOBBY_VERBS.values()) + r") (?P<x2>.+)$")
def _hobby(m: re.Match) -> Optional[Fact]:
    v3 = HOBBY_VERBS.get((m["v"] or "").lower(), (m["v2"] or "").lower())
    x = _clean_value(HOBBY_TAIL_RE.sub("", m["x"] or m["x2"]))
    x = re.sub(r"\bmy\b", "their", x, flags=re.I)  # third-person content: "my own beer" -> "their own beer"
    if not _ok_value(x, 5) or PRONOUN_OBJECT_RE.match(x):
        return None
    return sem("hobby:" + v3 + ":" + _norm_key(x), f"User {v3} {x}.", 0.5, False, x)


# time-bound states (only stored with a time expression) -------------------------------------------
@rule(r"^" + I_AM + r" (?:currently )?(?P<x>(?:in|at|visiting|staying (?:in|at|with)|attending|hosting|on) .+)$|^user is (?P<x2>(?:in|at|visiting|staying (?:in|at|with)|attending|hosting|on) .+)$")
def _state_place(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["x2"])
    if not _ok_value(x, 8):
        return None
    return Fact("state:" + _norm_key(x), "episodic", f"User is {x}.", 0.4, False, x)


@rule(r"^" + I_AM + r" (?P<v>travel(?:l)?ing|flying|going|heading|driving|moving|off) to (?P<x>.+)$|^user is (?P<v2>travel(?:l)?ing|flying|going|heading|driving|moving|off) to (?P<x2>.+)$")
def _state_travel(m: re.Match) -> Optional[Fact]:
    v = (m["v"] or m["v2"]).lower()
    x = _clean_value(m["x"] or m["x2"])
    if not _ok_value(x, 8):
        return None
    return Fact("state:" + _norm_key(x), "episodic", f"User is {v} to {x}.", 0.4, False, x)


@rule(r"^" + I_AM + r" (?P<x>sick|ill|off work|off|away|out of (?:the )?office|busy|unavailable|working from home|travel(?:l)?ing|on (?:vacation|holiday|leave|call|a trip|a business trip|parental leave|sick leave))$|^user is (?P<x2>.+)$")
def _state(m: re.Match) -> Optional[Fact]:
    x = (m["x"] or m["x2"]).lower()
    if m["x2"] and not re.fullmatch(r"sick|ill|off work|off|away|out of (?:the )?office|busy|unavailable|working from home|travel(?:l)?ing|on .+", x):
        return None
    return Fact("state:" + _norm_key(x), "episodic", f"User is {x}.", 0.4, False, x)


@rule(r"^(?:i|user) (?:have|has|'ve got|have got|got) (?P<x>(?:a|an|my|the|two|\d) (?:[\w'-]+ ){0,3}?(?:" + EVENT_NOUNS + r")s?\b.*)$")
def _event(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"])
    if not _ok_value(x, 10):
        return None
    return Fact("event:" + _norm_key(x), "episodic", f"User has {x}.", 0.4, False, x)


@rule(r"^i(?:'ll| will) be (?P<x>.+)$|^user will be (?P<x2>.+)$")
def _will_be(m: re.Match) -> Optional[Fact]:
    x = _clean_value(m["x"] or m["x2"])
    if not _ok_value(x, 8) or VALUE_STOP_RE.match(x) and not re.match(r"^(in|at|on|away|off|back)\b", x, re.I):
        return None
    return Fact("state:" + _norm_key(x), "episodic", f"User will be {x}.", 0.4, False, x)


# generic possessive (last: the most general durable rule) --------------------------------------
@rule(r"^my (?P<attr>(?:[\w'-]+ ){0,2}?[\w'-]+) (?:is|are) (?P<x>.+)$|^user's (?P<attr2>(?:[\w'-]+ ){0,2}?[\w'-]+) (?:is|are) (?P<x2>.+)$")
def _possessive(m: re.Match) -> Optional[Fact]:
    attr = (m["attr"] or m["attr2"]).lower()
    x = _clean_value(m["x"] or m["x2"])
    if attr.split()[-1] in ATTR_STOP or attr.split()[0] in ATTR_STOP or not _ok_value(x, 8):
        return None
    if VALUE_STOP_RE.match(x) and not TIME_RE.search(x):
        return None
    verb = "are" if re.search(r" are ", m.group(0)) else "is"
    return sem("attr:" + _norm_key(attr), f"User's {attr} {verb} {x}.", 0.6, True, x)


TIME_ONLY_KINDS = {"state", "event"}  # key prefixes that are stored only with a time expression


# ---------------------------------------------------------------------------------------------
# Time expressions -> expires_in_days

def expires_in_days(phrase: str, today: dt.date) -> int:
    """Days until a time expression runs out, counted from ``today`` (at least 1)."""
    p = phrase.lower()
    wd = today.weekday()
    end_of_month = calendar.monthrange(today.year, today.month)[1] - today.day + 1
    if p in ("today", "tonight", "later today") or p.startswith("this ") and p.split()[1] in ("morning", "afternoon", "evening"):
        return 1
    if p in ("tomorrow",) or p.endswith("tomorrow") or p.endswith("tonight"):
        return 2 if "tomorrow" in p else 1
    if p in ("this week",) or p.endswith("end of the week") or p.endswith("end of this week"):
        return 7 - wd
    if p in ("this weekend", "over the weekend"):
        return max(1, 7 - wd)
    if p == "next week" or p.endswith("end of next week"):
        return 14 - wd
    if p == "next weekend":
        return 14 - wd
    if p == "this month" or p.endswith("end of the month") or p.endswith("end of this month"):
        return end_of_month
    if p == "next month" or p.endswith("end of next month"):
        nm_year, nm = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return end_of_month + calendar.monthrange(nm_year, nm)[1]
    if p in ("this year",) or p.endswith("end of the year") or p.endswith("end of this year"):
        return (dt.date(today.year, 12, 31) - today).days + 1
    if p == "next year":
        return (dt.date(today.year + 1, 12, 31) - today).days + 1
    if p.startswith("this ") and p.split()[1] in ("summer", "winter", "spring", "fall", "autumn"):
        return 90
    m = re.search(r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)", p)
    if m:
        delta = (WEEKDAYS.index(m.group(1)) - wd) % 7 or 7
        if p.startswith("next ") or " next " in p:
            delta += 7 if delta < 7 else 0
        return delta + 1
    m = re.search(r"(" + "|".join(MONTHS) + r") (\d{1,2})", p)
    if m:
        month, day = MONTHS.index(m.group(1)) + 1, int(m.group(2))
        try:
            target = dt.date(today.year, month, day)
            if target < today:
                target = dt.date(today.year + 1, month, day)
            return (target - today).days + 1
        except ValueError:
            return 7
    m = re.search(r"the (\d{1,2})", p)
    if m:
        day = int(m.group(1))
        try:
            target = dt.date(today.year, today.month, day)
            if target < today:
                target = (target.replace(day=1) + dt.timedelta(days=32)).replace(day=day)
            return (target - today).days + 1
        except ValueError:
            return 7
    m = re.search(r"(\d+|a few|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten) (day|week|month|night)", p)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBER_WORDS.get(m.group(1), 1)
        unit = {"day": 1, "night": 1, "week": 7, "month": 30}[m.group(2)]
        return max(1, n * unit)
    return 7


# ---------------------------------------------------------------------------------------------
# Clause analysis

def own_spans(text: str) -> list[tuple[int, int]]:
    """Spans of a user turn that are the user's own words (not pasted, quoted or forwarded text)."""
    end = len(text)
    marker = PASTE_MARKER_RE.search(text)
    if marker:
        end = min(end, marker.start())
    header = HEADER_LINE_RE.search(text)
    if header:
        end = min(end, header.start())
    spans = []
    pos = 0
    for line in text[:end].splitlines(keepends=True):
        if not line.lstrip().startswith(">") and not line.lstrip().startswith("|"):
            spans.append((pos, pos + len(line)))
        pos += len(line)
    return spans


def _strip_lead(text: str, s: int, e: int) -> tuple[int, bool]:
    """Skip leading fillers ('actually, ', 'btw '); return new start and whether it was a correction."""
    m = LEAD_FILLER_RE.match(text[s:e])
    if not m:
        return s, False
    correction = bool(re.search(r"\b(actually|correction|update|in fact)\b", m.group(0), re.I))
    return s + m.end(), correction


def _clauses(text: str, s: int, e: int) -> list[tuple[int, int]]:
    """Split a sentence into clauses at ', and I', ' but I', ' and my' (a new first-person subject)."""
    out = []
    start = s
    for m in re.finditer(r"\s*(?:,\s*(?:and|but|so|while|though)?|\s+(?:and|but|so|while|though))\s+(?=(?:i|i'm|i've|i'd|my|we)\b)", text[s:e], re.I):
        out.append((start, s + m.start()))
        start = s + m.end()
    out.append((start, e))
    return [(a, b) for a, b in out if b > a]


def _strip_time(clause: str) -> tuple[str, Optional[str]]:
    m = TIME_RE.search(clause)
    if not m:
        return clause, None
    stripped = (clause[: m.start()] + clause[m.end():]).strip()
    stripped = re.sub(r"\s{2,}", " ", stripped).strip(" ,")
    return stripped, m.group(0)


# Focus adverbs and fillers right after the first-person subject (or its "am"/"have") carry no fact:
# dropping them leaves the plain statement the rules already read ("I'm also vegan" -> "I'm vegan").
FOCUS_ADVERB_RE = re.compile(
    r"^(i(?:'m| am|'ve| have)?)\s+(?:(?:also|actually|still|really|just|truly|definitely|honestly|totally|"
    r"genuinely|indeed|in fact)\s+)+",
    re.I,
)

DENIAL_ASIDE_RE = re.compile(
    r"\s*[,;-]\s*(?:that(?:'s| is| was)|it(?:'s| was)|those are|you(?:'re| are) thinking of|you mean|"
    r"you(?:'re| are) mixing (?:me )?up with)\s+(?:my|our|someone|somebody|a friend|another|the other)\b.*$",
    re.I,
)
NEGATION_START_RE = re.compile(r"^(?:" + I_AM + r" not|i (?:don't|do not|never|didn't|did not))\b", re.I)

NEG_PATTERNS = [
    (re.compile(r"^" + I_AM + r" (?:not|no longer) (?P<x>.+?)(?:\s+any ?more)?$", re.I), "i am {x}"),
    (re.compile(r"^i (?:no longer|don't|do not) (?P<v>live|work|eat|like|love|enjoy|own|have|drive|use|play|speak|prefer) (?P<x>.+?)(?:\s+any ?more)?$", re.I), "i {v} {x}"),
    (re.compile(r"^i(?:'ve| have) (?:stopped|quit|given up) (?P<x>.+)$", re.I), "i {x}"),
]
NEG_REQUIRES_ANYMORE = re.compile(r"\b(any ?more|no longer|stopped|quit|given up|not .* now)\b", re.I)


def match_clause(clause: str) -> Optional[Fact]:
    """Run the rules over one cleaned clause; the first rule producing a fact wins."""
    c = normalise_quotes(clause).strip().rstrip(" .!")
    for pattern, builder in RULES:
        m = pattern.match(c)
        if m:
            fact = builder(m)
            if fact is not None:
                return fact
    return None


def analyse_clause(clause: str, today: dt.date) -> Optional[Fact]:
    """A fact for one first-person clause of the user's own words, or None."""
    c = normalise_quotes(clause).strip().rstrip(" .!")
    if not c or HEDGE_RE.search(c) or THIRD_PARTY_RE.search(c):
        return None
    c = FOCUS_ADVERB_RE.sub(r"\1 ", c)  # "I'm also vegan" / "I still live in X" -> the plain statement
    # "I'm not allergic to X, that's my brother": a denial explained by naming who it really applies to.
    # The aside is dropped and the denial counts as a retraction (only ever applied to a matching memory).
    denial = False
    d = DENIAL_ASIDE_RE.search(c)
    if d and d.start() > 0:
        head = re.sub(r"^no\s*,\s*", "", c[: d.start()].strip(" ,;-"), flags=re.I)
        if NEGATION_START_RE.match(head):
            c, denial = head, True
    # negations / retractions
    for pattern, template in NEG_PATTERNS:
        m = pattern.match(c)
        if m and (denial or NEG_REQUIRES_ANYMORE.search(c) or m.group(0).lower().startswith(("i no longer", "i'm no longer", "i am no longer"))):
            positive = template.format(**{k: v for k, v in m.groupdict().items() if v is not None})
            fact = match_clause(positive)
            if fact is not None:
                return replace(fact, negated=True, denial=denial)
            return None
    if re.match(r"^i (?:don't|do not|didn't|never) (?:live|work)\b", c, re.I) or re.match(r"^" + I_AM + r" not\b", c, re.I):
        m = re.match(r"^i (?:don't|do not) (?P<v>live|work) (?P<x>.+)$", c, re.I)
        if m:
            fact = match_clause(f"i {m['v']} {m['x']}")
            return replace(fact, negated=True) if fact else None
        return None
    base, phrase = _strip_time(c)
    fact = match_clause(base)
    if fact is None:
        return None
    family = fact.key.split(":", 1)[0]
    if phrase:
        days = expires_in_days(phrase, today)
        content = fact.content.rstrip(".") + f" {phrase} (as of {today.isoformat()})."
        if fact.kind == "procedural":
            return fact
        return replace(fact, key="episodic:" + fact.key, kind="episodic", content=content, expires_in_days=days,
                       importance=0.4, single=False)
    if family in TIME_ONLY_KINDS:
        return None  # a state/event without a time bound: too vague to keep
    return fact


def _is_question_or_request(sentence: str) -> bool:
    s = normalise_quotes(sentence).strip()
    if s.endswith("?"):
        return True
    core = LEAD_FILLER_RE.sub("", s)
    return bool(QUESTION_START_RE.match(core))


def is_secret(sentence: str) -> bool:
    """Whether a sentence mentions or contains a secret (passwords, keys, card/ID numbers, long digit runs)."""
    return bool(SECRET_RE.search(sentence) or LONG_DIGITS_RE.search(sentence) or KEYLIKE_RE.search(sentence))


def facts_from_user_text(text: str, today: dt.date) -> list[Fact]:
    """All facts stated in one user turn (own words only), evidence = exact substring of ``text``."""
    facts: list[Fact] = []
    norm = normalise_quotes(text)
    for a, b in own_spans(norm):
        for s, e in sentence_spans(norm, a, b):
            sentence = norm[s:e]
            if '"' in sentence or is_secret(sentence) or _is_question_or_request(sentence):
                continue
            s2, _ = _strip_lead(norm, s, e)
            for cs, ce in _clauses(norm, s2, e):
                cs, _ = _strip_lead(norm, cs, ce)
                clause = norm[cs:ce]
                if REQUEST_START_RE.match(clause) and not re.match(r"^(please\s+)?(call me|address me|answer|respond|reply|write|talk|speak|always|never|keep)\b", clause, re.I):
                    continue
                fact = analyse_clause(clause, today)
                if fact is None:
                    continue
                evidence = text[cs:ce].strip().rstrip(" .!,;")
                if evidence and evidence in text:
                    facts.append(replace(fact, evidence=evidence))
    return facts


CONTEXT_CORRECTION_RE = re.compile(
    r"^(?:no|nope|actually|correction)?[,.!]?\s*(?:it's|it is|that's|that is)\s+(?:actually\s+)?(?P<x>[\w' -]+?)(?:,?\s*(?:now|actually|not (?P<old>[\w' -]+)))?[.!]*$",
    re.I,
)
CONTEXT_RETRACT_RE = re.compile(
    r"\b(that's|that is|this is|it's|it is)\s+(?:not true|wrong|incorrect|not right|outdated|no longer true|not correct)\b|\bnot any ?more\b",
    re.I,
)


# ---------------------------------------------------------------------------------------------
# Existing memories

def third_to_first(content: str) -> str:
    """Turn a canonical third-person memory ('User lives in Pune.') back into first person."""
    c = normalise_quotes(content).strip()
    c = re.sub(r"\s*\(as of [^)]*\)\s*", " ", c).strip()
    c = re.sub(r"^\[[^\]]*\]\s*(?:\((?:semantic|episodic|procedural)\)\s*)?", "", c)
    c = re.sub(r"^(?:the )?user\b", "User", c, flags=re.I)
    if not c.startswith("User"):
        return c
    rest = c[4:]
    m = re.match(r"^(?:'s) (.*)$", rest)
    if m:
        return "my " + m.group(1)
    m = re.match(r"^ (is|has|does not|was|will be|wants) (.*)$", rest)
    if m:
        verb = {"is": "i am", "has": "i have", "does not": "i do not", "was": "i was", "will be": "i will be", "wants": "user wants"}[m.group(1)]
        if m.group(1) == "wants":
            return c  # procedural templates are matched in third person directly
        return f"{verb} {m.group(2)}"
    m = re.match(r"^ (\w+) (.*)$", rest)
    if m:
        verb = m.group(1)
        if verb.endswith("ies"):
            verb = verb[:-3] + "y"
        elif re.search(r"(ches|shes|sses|xes|zes|oes)$", verb):
            verb = verb[:-2]
        elif verb.endswith("s"):
            verb = verb[:-1]
        return f"i {verb} {m.group(2)}"
    return c


def parse_memory(content: str) -> Optional[Fact]:
    """The fact (attribute key) behind an existing memory's text, via the same rules as extraction."""
    first = third_to_first(content).rstrip(" .")
    base, phrase = _strip_time(first)
    fact = match_clause(base)
    if fact is not None and phrase and fact.kind != "procedural":
        return replace(fact, key="episodic:" + fact.key, kind="episodic")
    return fact if fact is not None else match_clause(first)


@dataclass
class Turn:
    role: str
    text: str


def _same(a: str, b: str) -> bool:
    norm = lambda s: re.sub(r"\s*\(as of [^)]*\)", "", s).strip().rstrip(".").lower()
    return norm(a) == norm(b)


def reconcile(turns: list[Turn], existing: list[tuple[str, str]], today: dt.date) -> list[Operation]:
    """Operations (add/update/retract) for the USER turns of a conversation against existing memories."""
    parsed = [(ref, text, parse_memory(text)) for ref, text in existing]
    candidates: list[Fact] = []
    context_ops: list[Operation] = []
    last_other = ""
    for turn in turns:
        if turn.role != "user":
            last_other = turn.text
            continue
        candidates.extend(facts_from_user_text(turn.text, today))
        context_ops.extend(_context_corrections(turn.text, last_other, parsed, today))
    # the last statement about a single-valued attribute wins within one conversation
    merged: list[Fact] = []
    for fact in candidates:
        if fact.single and not fact.negated:
            merged = [f for f in merged if not (f.key == fact.key and not f.negated)]
        merged.append(fact)
    ops: list[Operation] = []
    touched: set[str] = set()
    for fact in merged:
        same_key = [(ref, text, f) for ref, text, f in parsed if f is not None and f.key == fact.key]
        if fact.negated:
            for ref, text, f in same_key:
                if ref not in touched and ((fact.single and not fact.denial) or _norm_key(f.value) == _norm_key(fact.value) or not fact.value):
                    ops.append(Operation("retract", ref, f.kind, text, f.importance, None, fact.evidence))
                    touched.add(ref)
                    break
            continue
        if any(_same(text, fact.content) for _, text, _ in parsed) or any(_same(text, fact.content) for _, text in existing):
            continue
        if fact.single and same_key:
            ref = same_key[0][0]
            if ref in touched:
                ops = [o for o in ops if o.ref != ref]
            ops.append(Operation("update", ref, fact.kind, fact.content, fact.importance, fact.expires_in_days, fact.evidence))
            touched.add(ref)
            continue
        if any(o.op == "add" and _same(o.content, fact.content) for o in ops):
            continue
        ops.append(Operation("add", None, fact.kind, fact.content, fact.importance, fact.expires_in_days, fact.evidence))
    for op in context_ops:
        if op.ref not in touched:
            ops.append(op)
            touched.add(op.ref or "")
    return ops


def _context_corrections(user_text: str, previous: str, parsed: list[tuple[str, str, Optional[Fact]]], today: dt.date) -> list[Operation]:
    """'No, it's Pune.' / 'That's wrong.': resolve against the memory whose value the previous turn mentioned."""
    norm = normalise_quotes(user_text)
    if not previous or is_secret(norm):
        return []
    mentioned = [(ref, text, f) for ref, text, f in parsed if f is not None and f.value and re.search(r"\b" + re.escape(f.value) + r"\b", previous, re.I)]
    if len(mentioned) != 1:
        return []
    ref, text, fact = mentioned[0]
    for a, b in own_spans(norm):
        for s, e in sentence_spans(norm, a, b):
            sentence = norm[s:e].strip()
            if '"' in sentence:
                continue
            m = CONTEXT_CORRECTION_RE.match(sentence)
            if m and fact.single and not CONTEXT_RETRACT_RE.search(sentence):
                new_value = _clean_value(m["x"])
                if new_value and _norm_key(new_value) != _norm_key(fact.value) and _ok_value(new_value, 5) and not HEDGE_RE.search(sentence):
                    content = re.sub(re.escape(fact.value), new_value, text, count=1, flags=re.I)
                    evidence = user_text[s:e].strip()
                    return [Operation("update", ref, fact.kind, content, fact.importance, None, evidence)]
            if CONTEXT_RETRACT_RE.search(sentence) and not HEDGE_RE.search(sentence):
                evidence = user_text[s:e].strip()
                return [Operation("retract", ref, fact.kind, text, fact.importance, None, evidence)]
    return []


# ---------------------------------------------------------------------------------------------
# Request formats

LAB_TODAY_RE = re.compile(r"<today>\s*(\d{4}-\d{2}-\d{2})\s*</today>")
LAB_EXISTING_RE = re.compile(r"<existing_memories>(.*?)</existing_memories>", re.S)
LAB_TURN_RE = re.compile(r"<(user|assistant)>(.*?)</\1>", re.S)


def _date(value: Optional[str]) -> dt.date:
    try:
        return dt.date.fromisoformat(value) if value else dt.date.today()
    except ValueError:
        return dt.date.today()


def parse_lab_payload(payload: str) -> tuple[dt.date, list[tuple[str, str]], list[Turn]]:
    """Parse the lab's extraction payload (<today>, <existing_memories>, <conversation>)."""
    m = LAB_TODAY_RE.search(payload)
    today = _date(m.group(1) if m else None)
    existing: list[tuple[str, str]] = []
    em = LAB_EXISTING_RE.search(payload)
    if em:
        for line in em.group(1).splitlines():
            lm = re.match(r"^\s*\[([^\]]+)\]\s*(.+?)\s*$", line)
            if lm:
                existing.append((lm.group(1), lm.group(2)))
    convo = payload
    cm = re.search(r"<conversation>(.*)</conversation>", payload, re.S)
    if cm:
        convo = cm.group(1)
    turns = [Turn(t.group(1), html.unescape(t.group(2)) if "&" in t.group(2) and not "&" in html.unescape(t.group(2)) else t.group(2)) for t in LAB_TURN_RE.finditer(convo)]
    return today, existing, turns


def is_mem0_extraction(system: str, user: str) -> bool:
    """Mem0's ADDITIVE_EXTRACTION_PROMPT (stable features of its text) with its user prompt sections."""
    return "Memory Extractor" in system and '"memory"' in system and "attributed_to" in system and "## New Messages" in user


def parse_mem0_prompt(user: str) -> tuple[dt.date, list[tuple[str, str]], list[Turn]]:
    """Parse Mem0's additive-extraction user prompt: '## New Messages' as 'role: content' lines."""
    sections: dict[str, str] = {}
    for m in re.finditer(r"^## ([^\n]+)\n(.*?)(?=^## |^# Output:|\Z)", user, re.S | re.M):
        sections[m.group(1).strip()] = m.group(2).strip()
    today = _date((sections.get("Current Date") or "").strip()[:10] or None)
    existing: list[tuple[str, str]] = []
    try:
        for item in json.loads(sections.get("Existing Memories") or "[]"):
            existing.append((str(item.get("id")), str(item.get("text", ""))))
    except (ValueError, AttributeError):
        pass
    turns: list[Turn] = []
    raw = sections.get("New Messages", "")
    try:  # Mem0 sends a string; a JSON list is also accepted
        as_list = json.loads(raw)
        if isinstance(as_list, list):
            return today, existing, [Turn(str(x.get("role")), str(x.get("content", ""))) for x in as_list if isinstance(x, dict)]
    except ValueError:
        pass
    for line in raw.splitlines():
        m = re.match(r"^(user|assistant|system):\s?(.*)$", line)
        if m:
            turns.append(Turn(m.group(1), m.group(2)))
        elif turns:
            turns[-1].text += "\n" + line
    return today, existing, turns


def mem0_memories(user_prompt: str) -> dict:
    """Mem0's reply shape: {"memory": [{"id", "text", "attributed_to"}]} (ADD-only, user facts only)."""
    today, existing, turns = parse_mem0_prompt(user_prompt)
    ops = reconcile(turns, existing, today)
    items = []
    for op in ops:
        if op.op in ("add", "update"):
            items.append({"id": str(len(items)), "text": op.content, "attributed_to": "user"})
    return {"memory": items}

"""Time expressions in a clause: where they are, whether they point back or ahead, and for a
future bound, how many days until it runs out.

Why separate: tense alone does not say whether a fact is a passing event ("I'm in Berlin until
Friday") or a lasting one ("I live in Berlin"); the time phrase does, and the same phrase gives
the memory's expiry.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from typing import Optional

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = [m.lower() for m in calendar.month_name if m]
_WD = "|".join(WEEKDAYS)
_MON = "|".join(MONTHS + [m[:3] for m in MONTHS if len(m) > 3] + ["sept"])
_NUM = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|a couple|couple of|couple|several)"
_UNIT = r"(?:days?|weeks?|months?|years?|nights?|hours?)"
_DATE = rf"(?:(?:{_MON})\.? \d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MON})\.?|the \d{{1,2}}(?:st|nd|rd|th)?)"

FUTURE = rf"""today|tonight|tomorrow|later today|this (?:week|weekend|month|morning|afternoon|evening|year|summer|winter|spring|fall|autumn)|
next (?:week|weekend|month|year|summer|winter|spring|fall|autumn|{_WD})|
(?:until|till|til|through) (?:the end of (?:the |this |next )?(?:week|month|year)|(?:next )?(?:{_WD})|tomorrow|tonight|{_DATE})|
for (?:the )?(?:next )?{_NUM} (?:days?|weeks?|months?|nights?)|over the weekend|
in {_NUM} (?:days?|weeks?|months?)|soon"""
PAST = rf"""yesterday|last (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|time|{_WD})|
{_NUM} {_UNIT} ago|a while (?:back|ago)|ages ago|earlier (?:this|today)|over the (?:summer|winter|holidays|weekend)|recently|just now"""
DATED = rf"""on (?:{_WD})|on {_DATE}|{_DATE}|in (?:{_MON})|in (?:19|20)\d\d|this (?:{_WD})"""

def _alt(block: str) -> str:
    return block.replace("\n", "")


TIME_RE = re.compile(rf"\b(?P<future>{_alt(FUTURE)})\b|\b(?P<past>{_alt(PAST)})\b|\b(?P<dated>{_alt(DATED)})\b", re.I)
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "a few": 3, "a couple of": 2, "couple of": 2, "a couple": 2,
                "couple": 2, "several": 4}


@dataclass(frozen=True)
class TimePhrase:
    """A time phrase of a clause: its words and whether it points ahead, back, or at a date."""

    text: str
    direction: str  # future | past | dated
    start: int
    end: int


def find_time(text: str) -> Optional[TimePhrase]:
    """The first time phrase in ``text`` (durations like 'for three years' are not time bounds)."""
    m = TIME_RE.search(text)
    if not m:
        return None
    direction = next(k for k in ("future", "past", "dated") if m.group(k))
    return TimePhrase(m.group(0), direction, m.start(), m.end())


def _month_target(p: str, today: dt.date) -> Optional[dt.date]:
    m = re.search(rf"\b({_MON})\.? (\d{{1,2}})|(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MON})", p)
    if not m:
        return None
    name = (m.group(1) or m.group(4))[:3]
    month = [x[:3] for x in MONTHS].index(name) + 1
    day = int(m.group(2) or m.group(3))
    try:
        target = dt.date(today.year, month, day)
    except ValueError:
        return None
    return target if target >= today else dt.date(today.year + 1, month, day)


def expires_in_days(phrase: str, today: dt.date) -> int:
    """Days until a forward time expression runs out, counted from ``today`` (at least 1)."""
    p = phrase.lower()
    wd = today.weekday()
    end_of_month = calendar.monthrange(today.year, today.month)[1] - today.day + 1
    if p in ("today", "tonight", "later today") or (p.startswith("this ") and p.split()[1] in ("morning", "afternoon", "evening")):
        return 1
    if p.endswith("tomorrow"):
        return 2
    if p.endswith("tonight"):
        return 1
    if p in ("this week",) or p.endswith("end of the week") or p.endswith("end of this week"):
        return 7 - wd
    if p in ("this weekend", "over the weekend"):
        return max(1, 7 - wd)
    if p in ("next week", "next weekend") or p.endswith("end of next week"):
        return 14 - wd
    if p == "this month" or p.endswith("end of the month") or p.endswith("end of this month"):
        return end_of_month
    if p == "next month" or p.endswith("end of next month"):
        year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return end_of_month + calendar.monthrange(year, month)[1]
    if p == "this year" or p.endswith("end of the year") or p.endswith("end of this year"):
        return (dt.date(today.year, 12, 31) - today).days + 1
    if p == "next year":
        return (dt.date(today.year + 1, 12, 31) - today).days + 1
    if re.match(r"^(this|next) (summer|winter|spring|fall|autumn)$", p):
        return 90 if p.startswith("this") else 365
    target = _month_target(p, today)
    if target is not None:
        return (target - today).days + 1
    m = re.search(rf"\b({_WD})\b", p)
    if m:
        delta = (WEEKDAYS.index(m.group(1)) - wd) % 7 or 7
        if p.startswith("next "):
            delta += 7 if delta < 7 else 0
        return delta + 1
    m = re.search(rf"\bin ({_MON})\b", p)
    if m:
        month = [x[:3] for x in MONTHS].index(m.group(1)[:3]) + 1
        year = today.year if month >= today.month else today.year + 1
        return (dt.date(year, month, calendar.monthrange(year, month)[1]) - today).days + 1
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
    m = re.search(rf"({_NUM}) (day|week|month|night)", p)
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBER_WORDS.get(m.group(1), 1)
        return max(1, n * {"day": 1, "night": 1, "week": 7, "month": 30}[m.group(2)])
    return 7

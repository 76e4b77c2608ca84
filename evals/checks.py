"""Each expectation of a step turned into checks: one per listed regex or stored entry.

Pure functions over what the step produced (the turn, the stored texts, every text kept
about a user), so the scoring rules can be read, and tested, without running a backend.
A check returns None when it passed, else the failure text shown in the report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from backends.base import TurnResult
from evals.schema import Expect, StoredCheck

StoredTexts = Callable[[str], list[str]]
"""case user name -> that user's live memory texts in the backend under test."""
EverywhereTexts = Callable[[], Iterable[tuple[str, str]]]
"""(store, text) of everything kept about the case's users, in every store."""


def _search(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def turn_checks(expect: Expect, turn: TurnResult) -> list[str | None]:
    """The checks about the notes given to the model this turn and about its reply."""
    injected = turn.injected_texts
    error = f"the turn failed: {turn.error}" if turn.error else None
    results: list[str | None] = []
    for pattern in expect.injected_any:
        hit = any(_search(pattern, text) for text in injected)
        results.append(error or (None if hit else f"injected_any {pattern!r}: matched none of the {len(injected)} injected notes"))
    for pattern in expect.injected_none:
        hits = [text for text in injected if _search(pattern, text)]
        results.append(error or (f"injected_none {pattern!r}: matched injected note {hits[0]!r}" if hits else None))
    if expect.nothing_injected is not None:
        wanted_empty = expect.nothing_injected
        ok = (not injected) == wanted_empty
        results.append(error or (None if ok else f"nothing_injected {wanted_empty}: {len(injected)} notes were injected"))
    for pattern in expect.reply_matches:
        results.append(error or (None if _search(pattern, turn.reply) else f"reply_matches {pattern!r}: not found in the reply"))
    for pattern in expect.reply_avoids:
        results.append(error or (f"reply_avoids {pattern!r}: found in the reply" if _search(pattern, turn.reply) else None))
    return results


def stored_check(check: StoredCheck, texts: list[str]) -> str | None:
    found = sum(1 for text in texts if _search(check.match, text))
    if check.accepts(found):
        return None
    return f"stored {check.user} {check.match!r}: found {found}, expected {check.bound_text()}"


def absent_check(pattern: str, everywhere: Iterable[tuple[str, str]]) -> str | None:
    for store, text in everywhere:
        if _search(pattern, text):
            return f"absent_everywhere {pattern!r}: still in {store}"
    return None


def state_checks(expect: Expect, stored: StoredTexts, everywhere: EverywhereTexts) -> list[str | None]:
    """The checks about what the backend keeps, read after the step."""
    results: list[str | None] = [stored_check(check, stored(check.user)) for check in expect.stored]
    if expect.absent_everywhere is not None:
        results.append(absent_check(expect.absent_everywhere, everywhere()))
    return results

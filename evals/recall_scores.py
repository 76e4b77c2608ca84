"""Scores of a recall run, per backend: what was injected against what was needed.

precision / recall / f1 are micro-averaged over memory/message pairs (a memory injected
for a message that needs none is a false positive); empty_ok is the share of messages
needing nothing that got nothing; recall_at_3 (the share of needed pairs ranked in the
top 3) and mrr (of the first needed memory) judge the ranking BEFORE the gate, so a good
ranking with a bad threshold shows as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel
from evals.tables import markdown_table


class MessageOutcome(BaseModel):
    """One message on one backend, memory ids as in the set file."""

    profile: str
    text: str
    backend: str
    relevant: list[str]
    injected: list[str]
    ranked: list[str]


class BackendScores(BaseModel):
    precision: float
    recall: float
    f1: float
    empty_ok: float
    recall_at_3: float
    mrr: float
    messages: int


@dataclass
class _Tally:
    true_positive: int = 0
    false_positive: int = 0
    false_negative: int = 0
    empty: int = 0
    empty_ok: int = 0
    needed: int = 0
    in_top_3: int = 0
    reciprocal_ranks: list[float] = field(default_factory=list)
    messages: int = 0

    def add(self, outcome: MessageOutcome) -> None:
        relevant, injected = set(outcome.relevant), set(outcome.injected)
        self.messages += 1
        self.true_positive += len(relevant & injected)
        self.false_positive += len(injected - relevant)
        self.false_negative += len(relevant - injected)
        if not relevant:
            self.empty += 1
            self.empty_ok += not injected
            return
        self.needed += len(relevant)
        self.in_top_3 += len(relevant & set(outcome.ranked[:3]))
        first = next((rank for rank, memory in enumerate(outcome.ranked, 1) if memory in relevant), None)
        self.reciprocal_ranks.append(0.0 if first is None else 1.0 / first)

    def scores(self) -> BackendScores:
        precision = _ratio(self.true_positive, self.true_positive + self.false_positive)
        recall = _ratio(self.true_positive, self.true_positive + self.false_negative)
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        mrr = _ratio(sum(self.reciprocal_ranks), len(self.reciprocal_ranks))
        return BackendScores(precision=precision, recall=recall, f1=f1, empty_ok=_ratio(self.empty_ok, self.empty),
                             recall_at_3=_ratio(self.in_top_3, self.needed), mrr=mrr, messages=self.messages)


def _ratio(numerator: float, denominator: float) -> float:
    """0/0 counts as 1: no message needing nothing means none was wrongly filled."""
    return 1.0 if denominator == 0 else numerator / denominator


def score(outcomes: list[MessageOutcome]) -> dict[str, BackendScores]:
    tallies: dict[str, _Tally] = {}
    for outcome in outcomes:
        tallies.setdefault(outcome.backend, _Tally()).add(outcome)
    return {backend: tally.scores() for backend, tally in tallies.items()}


COLUMNS = ("precision", "recall", "f1", "empty_ok", "recall_at_3", "mrr", "messages")


def table(scores: dict[str, BackendScores]) -> str:
    header = ["backend", *COLUMNS]
    rows = [[backend, *(_cell(getattr(s, column)) for column in COLUMNS)] for backend, s in scores.items()]
    return markdown_table(header, rows)


def _cell(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.2f}"

"""A calibrated relevance score: the probability that a memory helps answer this message.

Raw cosine cannot be gated: "hello" scores 0.16 against a diet and a dinner question
0.19, and three quarters of the memories a message needs share no word with it. So recall
describes each candidate by a handful of numbers, each of which means something on its
own (its similarity; how much the message asks about the memory's topics; where it ranks
among the user's candidates and how far behind the best; whether the message is about
its sender at all; shared words), and a logistic model turns them into a probability.

The model's weights are data, fitted per embedder (`python -m evals.calibrate_recall`,
grouped by user profile so the fit is scored on users it never saw) and stored in
`calibration/<embedder>.json`; with no file for the embedder, relevance falls back to the
cosine itself. Scoring is a dot product: no model call on the request path.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel

CALIBRATION_DIR = Path(__file__).parent / "calibration"

TOPIC_WEIGHT = 0.5
"""How much of the topic affinity joins the similarity in the ranking score fed to the model."""

FEATURES = (
    "similarity", "topic_affinity", "combined", "reciprocal_rank", "gap_to_best", "zscore",
    "personal", "personal_x_combined", "episodic", "shared_words", "best_similarity", "best_combined", "topic_count",
    "recency",
)

_STOP = frozenset(
    "the a an and or of to in on for with at by from is are was were be been it its this that these those my your "
    "i me you we our what how when where why who which do does did can could would should will just please some any "
    "about into up out so get got have has had again also very really still now then than there their they them "
    "user user's".split()
)
_WORD = re.compile(r"[a-zà-ÿ]+")


def content_stems(text: str) -> set[str]:
    """Content words cut to five letters: a crude stemmer that is enough to match
    "allergic"/"allergy" and "swims"/"swimming" without a language model."""
    return {word[:5] for word in _WORD.findall(text.lower()) if word not in _STOP and len(word) > 2}


@dataclass(frozen=True)
class Candidate:
    """What relevance needs to know about one memory for this message."""

    similarity: float
    topic_affinity: float
    episodic: bool
    shared_words: int
    topic_count: int = 0
    """A memory about many topics matches many messages by topic alone: the model discounts it."""
    recency: float = 1.0
    """The half-life decay of an episodic memory (1 for facts and rules)."""


class Calibration(BaseModel):
    """Logistic weights over FEATURES, with the set they were fitted on and its scores."""

    embedder: str
    features: list[str]
    weights: list[float]
    intercept: float
    fitted_on: str = ""
    cross_validated: dict[str, float] = {}

    def probability(self, rows: np.ndarray) -> np.ndarray:
        logits = rows @ np.asarray(self.weights) + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))


@functools.lru_cache(maxsize=4)
def calibration_for(embedder_name: str) -> Calibration | None:
    path = CALIBRATION_DIR / f"{embedder_name}.json"
    if not path.exists():
        return None
    calibration = Calibration.model_validate(json.loads(path.read_text(encoding="utf-8")))
    if calibration.features != list(FEATURES):
        raise ValueError(f"{path} was fitted on other features; refit it with python -m evals.calibrate_recall")
    return calibration


def feature_rows(candidates: list[Candidate], personal: bool) -> np.ndarray:
    """One row of FEATURES per candidate; the per-message ones (rank, gap, z-score, best)
    compare the candidate with the user's other candidates for the same message."""
    if not candidates:
        return np.zeros((0, len(FEATURES)))
    similarity = np.array([c.similarity for c in candidates])
    affinity = np.array([c.topic_affinity for c in candidates])
    combined = similarity + TOPIC_WEIGHT * affinity
    order = np.argsort(-combined, kind="stable")
    rank = np.empty(len(candidates))
    rank[order] = np.arange(1, len(candidates) + 1)
    zscore = (combined - combined.mean()) / (combined.std() + 1e-6)
    flag = 1.0 if personal else 0.0
    columns = {
        "similarity": similarity, "topic_affinity": affinity, "combined": combined, "reciprocal_rank": 1.0 / rank,
        "gap_to_best": combined.max() - combined, "zscore": zscore, "personal": np.full(len(candidates), flag),
        "personal_x_combined": flag * combined, "episodic": np.array([float(c.episodic) for c in candidates]),
        "shared_words": np.array([min(c.shared_words, 3) for c in candidates], dtype=float),
        "best_similarity": np.full(len(candidates), similarity.max()),
        "best_combined": np.full(len(candidates), combined.max()),
        "topic_count": np.array([float(c.topic_count) for c in candidates]),
        "recency": np.array([c.recency for c in candidates]),
    }
    return np.column_stack([columns[name] for name in FEATURES])


def relevance(candidates: list[Candidate], personal: bool, calibration: Calibration | None) -> list[float]:
    """The calibrated probability per candidate (the cosine when no calibration exists)."""
    if calibration is None:
        return [c.similarity for c in candidates]
    return [float(p) for p in calibration.probability(feature_rows(candidates, personal))]


"""`python -m evals.calibrate_recall`: fit the custom pipeline's relevance model on a labelled set.

The custom recall gates on a probability (backends/custom/relevance.py), so the mapping
from its features to that probability is data, fitted here per embedder and written to
`backends/custom/calibration/<embedder>.json`. The features are computed by the same
code the lab runs (the memories stored through the pipeline's write path, the candidates
from its one-round-trip query). The fit is scored first by grouped cross-validation
(each fold scores users the model never saw), and those scores are kept in the file, so
the number quoted for a set is never the fit's score on its own training rows.
sklearn fits; the lab only reads the weights (a dot product, no sklearn at run time).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from backends.custom.recall import candidates_for
from backends.custom.relevance import CALIBRATION_DIR, FEATURES, Calibration, Candidate, feature_rows
from backends.custom.topics import topic_index
from backends.registry import build_backend
from evals.recall import ProfileRun
from evals.recall_scores import MessageOutcome, score, table
from evals.recall_set import DEFAULT_SET, Profile, RecallSetError, load_sets
from evals.runner import eval_runtime, stderr_progress
from runtime import Runtime
from settings import get_settings

REGULARISATION = 1.0
"""sklearn's C: the default; the features are few and on similar scales."""


SMALL_POOLS = (1, 2, 3, 5)
"""Also train on smaller profiles of these sizes: the same message, the memories it needs
(and, as often, a profile without them: the user who never said what the message is
about), the closest one it does not, and random others to fill the size. A lab user has a handful of memories, and the
relative features (rank, gap, z-score) of a 3-memory pool differ from a 12-memory one;
fitted on 12-memory profiles only, a needed memory standing alone scored under the gate
94% of the time on the dev set."""

SMALL_POOL_WEIGHT = 2.0
"""The smaller profiles of one message weigh, together, twice its full profile: on the dev
set (grouped CV) 0.5 and 1.0 gave the same F1 and a lower empty_ok (0.89 vs 0.91)."""


@dataclass
class LabelledMessage:
    profile: str
    group: int
    text: str
    relevant: list[str]
    memory_ids: list[str]
    described: list[Candidate]
    personal: bool

    def smaller_profile(self, size: int, rng: random.Random, with_needed: bool = True) -> list[int]:
        """The needed memories (or, `with_needed=False`, a user who lacks them), the closest
        unneeded one (the hard negative: a small profile has one as often as a large one),
        and random others, `size` in all."""
        needed = [i for i, memory in enumerate(self.memory_ids) if memory in self.relevant] if with_needed else []
        others = sorted((i for i, memory in enumerate(self.memory_ids) if memory not in self.relevant),
                        key=lambda i: self.described[i].similarity, reverse=True)
        hardest, rest = others[:1], others[1:]
        kept = (needed + hardest)[:max(size, len(needed))]
        return kept + rng.sample(rest, max(0, min(size - len(kept), len(rest))))

    def rows(self, keep: list[int] | None = None) -> tuple[np.ndarray, list[int]]:
        keep = list(range(len(self.memory_ids))) if keep is None else keep
        rows = feature_rows([self.described[i] for i in keep], self.personal)
        return rows, [int(self.memory_ids[i] in self.relevant) for i in keep]


def collect(profiles: list[Profile], runtime: Runtime, progress=stderr_progress) -> list[LabelledMessage]:
    backend, embedder = build_backend("custom", runtime), runtime.embedder
    messages, topics = [], topic_index(embedder)
    for group, profile in enumerate(profiles):
        run = ProfileRun(runtime, backend, profile)
        try:
            run.load()
            for message in profile.queries:
                found = candidates_for(runtime.engine, embedder, topics, run.user_id, message.text, runtime.clock.now(),
                                       runtime.settings.half_life_days)
                ids = [run.set_id_of.get(row.id, row.id) for row in found.rows]
                messages.append(LabelledMessage(profile.id, group, message.text, message.relevant, ids, found.described,
                                                found.personal))
        finally:
            run.erase()
    progress(f"{len(messages)} messages, {sum(len(m.memory_ids) for m in messages)} candidate rows")
    return messages


def training_rows(messages: list[LabelledMessage], seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every message's full candidate list, plus its smaller profiles (SMALL_POOLS), these
    weighted SMALL_POOL_WEIGHT in all so the full profiles keep deciding the ranking."""
    rng, blocks, labels, weights = random.Random(seed), [], [], []
    for message in messages:
        sizes = [size for size in SMALL_POOLS if size < len(message.memory_ids)]
        pools = [message.smaller_profile(size, rng, with_needed) for size in sizes
                 for with_needed in ((True, False) if message.relevant else (True,))]
        for keep in [None, *pools]:
            rows, y = message.rows(keep)
            blocks.append(rows)
            labels.extend(y)
            weights.extend([1.0 if keep is None else SMALL_POOL_WEIGHT / len(pools)] * len(y))
    return np.vstack(blocks), np.array(labels), np.array(weights)


def fit(messages: list[LabelledMessage]) -> LogisticRegression:
    x, y, weights = training_rows(messages)
    return LogisticRegression(C=REGULARISATION, max_iter=5000).fit(x, y, sample_weight=weights)


def outcomes(messages: list[LabelledMessage], model_for, gate: float, top_k: int) -> list[MessageOutcome]:
    """Each message's full list scored by `model_for(message)`, gated the way recall gates
    (episodic decay left out: the fit is of relevance)."""
    result = []
    for message in messages:
        rows, _ = message.rows()
        p = model_for(message).predict_proba(rows)[:, 1]
        ranked = [message.memory_ids[i] for i in np.argsort(-p, kind="stable")]
        injected = [message.memory_ids[i] for i in np.argsort(-p, kind="stable") if p[i] >= gate][:top_k]
        result.append(MessageOutcome(profile=message.profile, text=message.text, backend="custom",
                                     relevant=message.relevant, injected=injected, ranked=ranked))
    return result


def cross_validated(messages: list[LabelledMessage], folds: int, gate: float, top_k: int) -> list[MessageOutcome]:
    """Each fold's model scores only the users it was not fitted on."""
    groups = sorted({m.group for m in messages})
    fold_of = {group: i % folds for i, group in enumerate(groups)}
    models = {fold: fit([m for m in messages if fold_of[m.group] != fold]) for fold in range(folds)}
    return outcomes(messages, lambda message: models[fold_of[message.group]], gate, top_k)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.calibrate_recall", description=__doc__.splitlines()[0])
    parser.add_argument("--set", nargs="+", action="extend", type=Path, metavar="FILE", dest="sets")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="default: backends/custom/calibration/<embedder>.json")
    args = parser.parse_args(argv)
    try:
        paths = args.sets or [DEFAULT_SET]
        profiles = load_sets(paths)
    except RecallSetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    settings = get_settings()
    runtime = eval_runtime(settings)
    messages = collect(profiles, runtime)
    gate, top_k = settings.min_similarity, settings.top_k
    cv = score(cross_validated(messages, args.folds, gate, top_k))["custom"]
    print(f"cross-validated ({args.folds} folds by profile) at gate {gate}, top_k {top_k}:")
    print(table({"custom": cv}))
    model = fit(messages)
    calibration = Calibration(embedder=runtime.embedder.name, features=list(FEATURES),
                              weights=[round(float(w), 6) for w in model.coef_[0]],
                              intercept=round(float(model.intercept_[0]), 6),
                              fitted_on=", ".join(Path(p).name for p in paths),
                              cross_validated={k: round(v, 4) for k, v in cv.model_dump().items()})
    out = args.out or CALIBRATION_DIR / f"{runtime.embedder.name}.json"
    out.write_text(json.dumps(calibration.model_dump(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

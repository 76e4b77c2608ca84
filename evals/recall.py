"""`python -m evals.recall`: the labelled recall benchmark, per backend.

Each profile's memories are loaded into a throwaway user through the backend's own write
path (`MemoryBackend.remember`: the custom pipeline's extraction write path with its
embedding and retrieval topics, episodic memories dated `days_ago` before the clock;
Mem0's `add(infer=False)`), with no chat model. Every message then goes through the
backend's real recall (`prepare_turn`, the lab's knobs), and what it injected and how it
ranked is scored against the labels (evals/recall_scores.py). The users are erased
everywhere afterwards. Exit status 0 when it ran, 2 on a bad set file or backend.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from backends.base import Knobs, MemoryBackend, Note, Recall, TurnContext
from backends.erasure import erase_user_everywhere
from backends.registry import build_backend
from evals.recall_scores import MessageOutcome, score, table
from evals.recall_set import DEFAULT_SET, LabelledMessage, Profile, RecallSetError, load_sets
from evals.runner import BackendUnavailable, check_backends, eval_runtime, stderr_progress
from runtime import Runtime
from settings import SettingsError, get_settings

DEFAULT_BACKENDS = ("custom", "mem0")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.recall", description=__doc__.splitlines()[0])
    parser.add_argument("--set", nargs="+", action="extend", type=Path, metavar="FILE", dest="sets",
                        help=f"labelled recall sets (default: {DEFAULT_SET})")
    parser.add_argument("--backend", nargs="+", action="extend", metavar="NAME",
                        help=f"backends to run (default: {' '.join(DEFAULT_BACKENDS)})")
    parser.add_argument("--min-similarity", type=float, metavar="X", help="the gate (default: MIN_SIMILARITY)")
    parser.add_argument("--top-k", type=int, metavar="K", help="notes at most (default: TOP_K)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write scores and per-message results here")
    return parser.parse_args(argv)


def ranking(notes: list[Note]) -> list[Note]:
    """The order before the gate: by the backend's score (its similarity when it has none)."""
    return sorted(notes, key=lambda n: n.score if n.score is not None else (n.similarity or 0.0), reverse=True)


@dataclass(frozen=True)
class Recalled:
    """One message's recall on one backend, kept so other knobs can re-gate it (the sweep)."""

    run: "ProfileRun"
    message: LabelledMessage
    recall: Recall

    def outcome(self, recall: Recall | None = None) -> MessageOutcome:
        recall, ids = recall or self.recall, self.run.set_id_of
        return MessageOutcome(
            profile=self.run.profile.id, text=self.message.text, backend=self.run.backend.name,
            relevant=self.message.relevant, injected=[ids.get(n.memory_id, n.memory_id) for n in recall.injected],
            ranked=[ids.get(n.memory_id, n.memory_id) for n in ranking(recall.notes)],
        )

    def regated(self, knobs: Knobs) -> MessageOutcome:
        return self.outcome(self.run.backend.regate(self.recall, knobs))


class ProfileRun:
    """One profile on one backend: a throwaway user holding the profile's memories."""

    def __init__(self, runtime: Runtime, backend: MemoryBackend, profile: Profile) -> None:
        self.runtime, self.backend, self.profile = runtime, backend, profile
        self.user_id = f"recall-{uuid.uuid4().hex[:10]}"
        self.set_id_of: dict[str, str] = {}

    def load(self) -> None:
        now = self.runtime.clock.now()
        for memory in self.profile.memories:
            created_at = now - timedelta(days=memory.days_ago) if memory.days_ago is not None else now
            stored = self.backend.remember(self.user_id, memory.text, memory.kind, created_at)
            self.set_id_of[stored] = memory.id

    def recalls(self, knobs: Knobs) -> list[Recalled]:
        return [Recalled(self, message, self.backend.prepare_turn(TurnContext(user_id=self.user_id, text=message.text,
                                                                              knobs=knobs)))
                for message in self.profile.queries]

    def erase(self) -> None:
        erase_user_everywhere(self.runtime, self.user_id)


def stores_directly(backend: MemoryBackend) -> bool:
    """Whether the backend implements `remember` (the memory-tool agent's files are written by the agent)."""
    return type(backend).remember is not MemoryBackend.remember


def collect(profiles: list[Profile], backends: list[str], knobs: Knobs, runtime: Runtime,
            progress=stderr_progress) -> list[Recalled]:
    """Every message's recall on every backend, each profile's user erased once it is done."""
    recalled: list[Recalled] = []
    for name in backends:
        backend = build_backend(name, runtime)
        if not stores_directly(backend):
            progress(f"--- {name}: skipped (it cannot store a memory without a chat model)")
            continue
        progress(f"--- {name}: {len(profiles)} profiles")
        for profile in profiles:
            profile_run = ProfileRun(runtime, backend, profile)
            try:
                profile_run.load()
                recalled.extend(profile_run.recalls(knobs))
            finally:
                profile_run.erase()
    return recalled


def run(profiles: list[Profile], backends: list[str], knobs: Knobs, runtime: Runtime,
        progress=stderr_progress) -> list[MessageOutcome]:
    return [item.outcome() for item in collect(profiles, backends, knobs, runtime, progress)]


def write_json(outcomes: list[MessageOutcome], path: Path) -> None:
    document = {"scores": {backend: s.model_dump() for backend, s in score(outcomes).items()},
                "messages": [outcome.model_dump() for outcome in outcomes]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")


def knobs_from(args: argparse.Namespace) -> Knobs:
    overrides = {name: value for name, value in (("min_similarity", args.min_similarity), ("top_k", args.top_k))
                 if value is not None}
    return Knobs.from_settings(get_settings(), **overrides)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        profiles = load_sets(args.sets or [DEFAULT_SET])
        backends = check_backends(args.backend or list(DEFAULT_BACKENDS))
        knobs = knobs_from(args)
    except (RecallSetError, BackendUnavailable, SettingsError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stderr_progress(f"{len(profiles)} profiles, {sum(len(p.queries) for p in profiles)} messages x {len(backends)} "
                    f"backends; min_similarity {knobs.min_similarity}, top_k {knobs.top_k}")
    outcomes = run(profiles, backends, knobs, eval_runtime(get_settings()))
    print(table(score(outcomes)))
    if args.json:
        write_json(outcomes, args.json)
        stderr_progress(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

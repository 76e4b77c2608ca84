"""The lab's turn: every backend in parallel threads (ui.parallel.run_parallel) vs the same
backends one after another, on the same messages.

    .venv/bin/python -m benchmarks.lab_turn_parallel [--turns 8]

Uses a throwaway embedded Postgres (scratch.py via benchmarks/isolated.py: never the lab's data) and the
offline model. Two fresh users get the same messages, alternating which mode goes first
each turn so machine load hits both alike; each turn embeds its message once (the
parallel turn as the lab runs it: `run_parallel(..., embedder=)` starts the backends that do
not recall by vector first; the sequential one embeds first), inside the timed wall; background work
(extraction, Mem0 add) is drained after each turn, untimed, so both users' memories grow
the same way. The table gives the wall time of a turn per mode, the slowest single
backend inside the parallel turn, and the ratios (one untimed warm-up turn first).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from backends.base import TurnContext
from backends.query_vector import with_query_vector
from backends.registry import backend_names, build_backend
from benchmarks.figures import Figure, percentile
from benchmarks.isolated import isolate
from jobs.runner import drain
from scratch import scratch_runtime
from ui.parallel import run_parallel, safe_turn

MESSAGES = [
    "I am vegetarian and I live in Lisbon.",
    "My dog is called Rex and he is three.",
    "What should I cook for dinner tonight?",
    "I started learning the cello last month.",
    "Any ideas for a weekend trip?",
    "Remember that I am allergic to peanuts.",
    "What snacks could I take on a hike with Rex?",
    "Which concerts might I enjoy?",
]


def sequential(backends, context) -> dict[str, float]:  # noqa: ANN001
    return {name: safe_turn(backend, context, lambda _text: None).timings.total_ms for name, backend in backends.items()}


def measure(runtime, turns: int) -> tuple[dict[str, list[float]], list[float], list[str]]:  # noqa: ANN001 - a Runtime
    """Wall ms per mode, the slowest backend's ms inside each parallel turn, the backends."""
    backends = {name: build_backend(name, runtime) for name in backend_names()}
    users = {mode: runtime.store.ensure_user(f"bench-{mode}-{uuid.uuid4().hex[:6]}") for mode in ("parallel", "sequential")}
    warm_up = TurnContext(user_id=runtime.store.ensure_user(f"bench-warm-{uuid.uuid4().hex[:6]}"), text=MESSAGES[0])
    run_parallel(backends, warm_up, embedder=runtime.embedder)  # untimed: first calls load models, open pools
    walls: dict[str, list[float]] = {"parallel": [], "sequential": []}
    slowest: list[float] = []
    for number in range(turns):
        text = f"{MESSAGES[number % len(MESSAGES)]} ({number})"  # a new text each turn: no embedding cached
        order = ("parallel", "sequential") if number % 2 == 0 else ("sequential", "parallel")
        for mode in order:
            started = time.perf_counter()
            context = TurnContext(user_id=users[mode], text=f"{text} [{mode}]")
            if mode == "parallel":
                results = run_parallel(backends, context, embedder=runtime.embedder)
                errors = [result.error for result in results.values() if result.error]
                assert not errors, errors
                slowest.append(max(result.timings.total_ms for result in results.values()))
            else:
                sequential(backends, with_query_vector(context, runtime.embedder))
            walls[mode].append((time.perf_counter() - started) * 1000)
            drain(runtime, user_id=users[mode])
    return walls, slowest, list(backends)


def figures(runtime, quick: bool) -> list[Figure]:  # noqa: ANN001 - a Runtime
    walls, slowest, _ = measure(runtime, 4 if quick else 12)
    parallel, alone = percentile(walls["parallel"], 50), percentile(slowest, 50)
    ratio = parallel / alone
    return [
        Figure("parallel 4-backend lab turn, wall p50", parallel, "ms", "<= 1.2x slowest backend", ratio <= 1.2,
               "slowest backend inside it, p50", alone),
        Figure("parallel lab turn vs the same backends one after another, p50", parallel, "ms",
               baseline="sequential turn p50", baseline_value=percentile(walls["sequential"], 50)),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=len(MESSAGES))
    turns = parser.parse_args(argv).turns
    root = isolate()
    walls, slowest, names = measure(scratch_runtime(), turns)
    p50 = {mode: statistics.median(values) for mode, values in walls.items()}
    slowest_p50 = statistics.median(slowest)
    print(f"{turns} turns x {len(names)} backends ({', '.join(names)}), offline model, data dir {root}")
    print("| turn mode | p50 wall ms | p90 wall ms |")
    print("|---|---:|---:|")
    for mode, values in walls.items():
        print(f"| {mode} | {p50[mode]:.0f} | {percentile(values, 90):.0f} |")
    print(f"| slowest backend inside the parallel turn | {slowest_p50:.0f} | |")
    print(f"\nparallel / sequential p50: {p50['parallel'] / p50['sequential']:.2f}")
    print(f"parallel / slowest backend p50: {p50['parallel'] / slowest_p50:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The lab's turn: every backend in parallel threads (ui.parallel.run_parallel) vs the same
backends one after another, on the same messages.

    .venv/bin/python benchmarks/lab_turn_parallel.py [--turns 8]

Uses scratch storage (scratch.py: never the lab's data) and the offline model.
Two fresh users get the same messages, alternating which mode goes first each turn so
machine load hits both alike; background work (extraction, Mem0 add) is drained after each
turn, untimed, so both users' memories grow the same way. The table gives the wall time of
a turn per mode, the slowest single backend inside the parallel turn, and the ratios (one untimed warm-up
turn first).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from the repo root

from backends.base import TurnContext  # noqa: E402
from backends.registry import backend_names, build_backend  # noqa: E402
from scratch import scratch_runtime  # noqa: E402
from jobs.runner import drain  # noqa: E402
from ui.parallel import run_parallel, safe_turn  # noqa: E402

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


def sequential(backends, context) -> dict[str, float]:
    return {name: safe_turn(backend, context, lambda _text: None).timings.total_ms for name, backend in backends.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=len(MESSAGES))
    turns = parser.parse_args().turns
    runtime = scratch_runtime(llm_provider="offline")  # scratch data: never the lab's
    backends = {name: build_backend(name, runtime) for name in backend_names()}
    users = {mode: runtime.store.ensure_user(f"bench-{mode}-{uuid.uuid4().hex[:6]}") for mode in ("parallel", "sequential")}
    warm_up = TurnContext(user_id=runtime.store.ensure_user(f"bench-warm-{uuid.uuid4().hex[:6]}"), text=MESSAGES[0])
    run_parallel(backends, warm_up)  # untimed: first calls load models and open connections
    walls: dict[str, list[float]] = {"parallel": [], "sequential": []}
    slowest: list[float] = []
    for number in range(turns):
        text = MESSAGES[number % len(MESSAGES)]
        order = ("parallel", "sequential") if number % 2 == 0 else ("sequential", "parallel")
        for mode in order:
            context = TurnContext(user_id=users[mode], text=text)
            started = time.perf_counter()
            if mode == "parallel":
                results = run_parallel(backends, context)
                errors = [result.error for result in results.values() if result.error]
                assert not errors, errors
                slowest.append(max(result.timings.total_ms for result in results.values()))
            else:
                sequential(backends, context)
            walls[mode].append((time.perf_counter() - started) * 1000)
            drain(runtime, user_id=users[mode])
    p50 = {mode: statistics.median(values) for mode, values in walls.items()}
    slowest_p50 = statistics.median(slowest)
    print(f"{turns} turns x {len(backends)} backends ({', '.join(backends)}), offline model, data dir {runtime.settings.data_dir}")
    print("| turn mode | p50 wall ms | p90 wall ms |")
    print("|---|---:|---:|")
    for mode, values in walls.items():
        print(f"| {mode} | {p50[mode]:.0f} | {statistics.quantiles(values, n=10)[-1]:.0f} |")
    print(f"| slowest backend inside the parallel turn | {slowest_p50:.0f} | |")
    print(f"\nparallel / sequential p50: {p50['parallel'] / p50['sequential']:.2f}")
    print(f"parallel / slowest backend p50: {p50['parallel'] / slowest_p50:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

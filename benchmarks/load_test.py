"""Load test: many users chatting at once through every backend, then every job drained.

    .venv/bin/python -m benchmarks.load_test [--users 20] [--turns 10] [--workers 2]

Each simulated user is a thread sending `turns` messages, one after another, each through
all backends in parallel (the lab's own turn: `ui.parallel.run_parallel(..., embedder=)`),
while `workers` queue workers run the background jobs (custom extraction, Mem0's add)
concurrently, as the lab's scheduler and `python -m worker` would. Then the queue is drained
and the run is checked, on the offline model:

  lost extractions   a user turn of the custom or Mem0 column without its `memory_jobs`
                     guard row (the proof its extraction ran), or one of its jobs not `done`
  duplicated memories  two live custom memories of one user with the same text, or two
                     Mem0 rows of one user with the same hash
  leaks              another user's canary (each user's cat has a made-up name) in a
                     user's replies, injected notes or stored memories, in any backend

and it reports p50/p95 turn latency (a user's message answered by all backends) and jobs/s
(jobs completed over the whole run, drain included). The baseline is one user alone
sending the same messages, measured first in the same run.
"""

from __future__ import annotations

import argparse
import threading
import time
import uuid
from dataclasses import dataclass, field

from sqlalchemy import text

from backends.base import TurnContext
from backends.registry import backend_names, build_backend
from benchmarks.figures import Figure, check, load_average, percentile
from benchmarks.isolated import isolate
from jobs.runner import drain, run_until_idle
from scratch import scratch_runtime
from ui.parallel import run_parallel

SCRIPT = [
    "My cat is called {canary} and she is four.",
    "I work as a nurse on night shifts.",
    "What could I cook after a long shift?",
    "I live in a small flat with a balcony.",
    "Any ideas for plants on a balcony?",
    "I am learning to swim this year.",
    "What should I pack for a weekend by the sea?",
    "Actually I moved to a bigger flat last week.",
    "Which games could I play with my cat?",
    "What is my cat called?",
]
CANARY_ALPHABET = "bdfgklmnprstvz"


def canary(index: int, tag: str) -> str:
    """A made-up, pronounceable name no other user's text contains."""
    letters = "".join(CANARY_ALPHABET[(index * 7 + k * 3) % len(CANARY_ALPHABET)] + "aeiou"[(index + k) % 5] for k in range(3))
    return f"{letters.capitalize()}{tag}{index:02d}"


@dataclass
class UserRun:
    user_id: str
    canary: str
    latencies: list[float] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def chat(runtime, backends, run: UserRun, turns: int) -> None:  # noqa: ANN001
    for number in range(turns):
        message = SCRIPT[number % len(SCRIPT)].format(canary=run.canary)
        started = time.perf_counter()
        results = run_parallel(backends, TurnContext(user_id=run.user_id, text=message), embedder=runtime.embedder)
        run.latencies.append((time.perf_counter() - started) * 1000)
        for result in results.values():
            if result.error:
                run.errors.append(f"{result.backend}: {result.error[:200]}")
            run.seen += [result.reply, *result.injected_texts]


@dataclass
class LoadResult:
    users: int
    turns: int
    latencies: list[float]
    seconds: float
    jobs_done: int
    lost: int
    duplicated: int
    leaks: int
    errors: list[str]
    own_canary_recalled: int


def _count_checks(runtime, runs: list[UserRun]) -> tuple[int, int]:  # noqa: ANN001
    ids = [run.user_id for run in runs]
    with runtime.engine.connect() as connection:
        turns, lost = connection.execute(text(  # a typed user turn: role user, string content (not a tool result)
            "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM memory_jobs g "
            "  WHERE g.message_id = m.id AND g.user_id = m.user_id)) "
            "FROM messages m JOIN conversations c ON c.id = m.conversation_id AND c.user_id = m.user_id "
            "WHERE m.user_id = ANY(:ids) AND c.backend IN ('custom', 'mem0') AND m.role = 'user' "
            "AND json_typeof(m.payload::json -> 'content') = 'string'"), {"ids": ids}).one()
        expected = len(runs) * 2 * len(runs[0].latencies)
        if turns != expected:  # the check must see every turn, or a zero would mean nothing
            raise AssertionError(f"found {turns} user turns in the custom and Mem0 columns, expected {expected}")
        lost += connection.execute(text("SELECT count(*) FROM jobs WHERE user_id = ANY(:ids) AND state <> 'done'"),
                                   {"ids": ids}).scalar_one()
        duplicated = connection.execute(text(
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM memories WHERE user_id = ANY(:ids) "
            "AND superseded_at IS NULL AND retracted_at IS NULL GROUP BY user_id, lower(content) HAVING count(*) > 1) d"),
            {"ids": ids}).scalar_one()
        duplicated += connection.execute(text(
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM mem0_memories "
            "WHERE payload->>'user_id' = ANY(:ids) GROUP BY payload->>'user_id', payload->>'hash' HAVING count(*) > 1) d"),
            {"ids": ids}).scalar_one()
    return int(lost), int(duplicated)


def _leaks(backends, runs: list[UserRun]) -> tuple[int, int]:  # noqa: ANN001
    """(other users' canaries found, users whose own canary came back in a reply or note)."""
    leaks = recalled = 0
    for run in runs:
        stored = [t for backend in backends.values() for t in backend.all_texts(run.user_id)]
        everything = "\n".join(run.seen + stored)
        leaks += sum(1 for other in runs if other is not run and other.canary in everything)
        recalled += run.canary in "\n".join(run.seen[len(backends):])  # after the turn that said it
    return leaks, recalled


def measure(runtime, users: int, turns: int, workers: int) -> LoadResult:  # noqa: ANN001 - a Runtime
    backends = {name: build_backend(name, runtime) for name in backend_names()}
    tag = uuid.uuid4().hex[:4]
    runs = [UserRun(runtime.store.ensure_user(f"load-{tag}-{i:02d}"), canary(i, tag)) for i in range(users)]
    with runtime.engine.connect() as connection:
        done_before = connection.execute(text("SELECT count(*) FROM jobs WHERE state = 'done'")).scalar_one()
    stop = threading.Event()

    def work(index: int) -> None:
        while not stop.is_set():
            if not run_until_idle(runtime, f"load-worker-{tag}-{index}", should_stop=stop.is_set):
                stop.wait(0.2)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(workers)]
    chatters = [threading.Thread(target=chat, args=(runtime, backends, run, turns)) for run in runs]
    started = time.perf_counter()
    for thread in threads + chatters:
        thread.start()
    for thread in chatters:
        thread.join()
    stop.set()
    for thread in threads:
        thread.join()
    drain(runtime)
    seconds = time.perf_counter() - started
    with runtime.engine.connect() as connection:
        jobs_done = connection.execute(text("SELECT count(*) FROM jobs WHERE state = 'done'")).scalar_one() - done_before
    lost, duplicated = _count_checks(runtime, runs)
    leaks, recalled = _leaks(backends, runs)
    return LoadResult(users, turns, [ms for run in runs for ms in run.latencies], seconds, int(jobs_done), lost,
                      duplicated, leaks, [error for run in runs for error in run.errors], recalled)


def figures(runtime, quick: bool) -> list[Figure]:  # noqa: ANN001 - a Runtime
    users, turns = (6, 4) if quick else (20, 10)
    alone = measure(runtime, 1, turns, 2)
    load = measure(runtime, users, turns, 2)
    label = f"{users} users x {turns} turns"
    return [
        Figure(f"load test {label}: turn latency p50 (all backends)", percentile(load.latencies, 50), "ms",
               baseline="1 user alone p50", baseline_value=percentile(alone.latencies, 50)),
        Figure(f"load test {label}: turn latency p95", percentile(load.latencies, 95), "ms",
               baseline="1 user alone p95", baseline_value=percentile(alone.latencies, 95)),
        Figure(f"load test {label}: jobs/s (2 workers, drain included)", load.jobs_done / load.seconds, "jobs/s",
               baseline="1 user alone", baseline_value=alone.jobs_done / alone.seconds),
        Figure(f"load test {label}: lost extractions", load.lost, "count", *check(load.lost, "==", 0)),
        Figure(f"load test {label}: duplicated memories", load.duplicated, "count", *check(load.duplicated, "==", 0)),
        Figure(f"load test {label}: leaks (other users' canaries seen)", load.leaks, "count", *check(load.leaks, "==", 0)),
        Figure(f"load test {label}: turns with an error", len(load.errors), "count", *check(len(load.errors), "==", 0)),
        Figure(f"load test {label}: users whose own canary came back", load.own_canary_recalled, "users",
               *check(load.own_canary_recalled, ">=", users)),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    isolate()
    result = measure(scratch_runtime(), args.users, args.turns, args.workers)
    print(f"{result.users} users x {result.turns} turns in {result.seconds:.1f} s: turn p50 {percentile(result.latencies, 50):.0f} ms, "
          f"p95 {percentile(result.latencies, 95):.0f} ms; {result.jobs_done} jobs, {result.jobs_done / result.seconds:.1f} jobs/s; "
          f"lost {result.lost}, duplicated {result.duplicated}, leaks {result.leaks}, errors {len(result.errors)}, "
          f"own canary recalled for {result.own_canary_recalled} users; load average {load_average()}")
    for error in result.errors[:5]:
        print("  error:", error)


if __name__ == "__main__":
    main()

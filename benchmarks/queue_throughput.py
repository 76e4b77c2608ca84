"""Job queue throughput: how many jobs per second N worker threads get through.

Each configuration enqueues the same number of jobs and runs them with N threads, each a
separate claimer (its own pooled connection, its own worker id) in the lab's loop
(`jobs.runner.run_until_idle`: claim one with SKIP LOCKED, run, complete). Two handlers:

  noop      returns at once: the queue's own cost per job (claim, heartbeat, complete)
  io-20ms   sleeps 20 ms, like a handler waiting on an LLM or Mem0: workers overlap

The baseline is 1 worker on the same handler, measured in the same run; the ratio column
is jobs/s against it. A last pair of rows compares the queue's bookkeeping commits
(claim, heartbeat, complete) made synchronous against the default asynchronous ones
(`jobs.queue.ASYNC_COMMIT`), noop handler, 1 worker. Every run also checks that no job
ran twice.

    python -m benchmarks.queue_throughput                # 400 jobs per configuration
    python -m benchmarks.queue_throughput --jobs 200 --workers 1 2

It uses a throwaway embedded Postgres (scratch.py via benchmarks/isolated.py, not the lab's): a running
lab's scheduler would otherwise claim the benchmark's jobs and dead-letter their unknown kind.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import Counter
from typing import Any

from sqlalchemy import text

from benchmarks.figures import Figure, check
from benchmarks.isolated import isolate
from jobs import queue
from jobs.runner import run_until_idle
from scratch import scratch_runtime

HANDLERS = {"noop": 0.0, "io-20ms": 0.020}
RUNS: Counter[int] = Counter()
_runs_lock = threading.Lock()


def bench_handler(runtime: Any, payload: dict[str, Any], job_id: int) -> dict[str, Any]:
    """The benchmark's job: optional sleep, then count the run (to prove nothing ran twice)."""
    if payload["sleep"]:
        time.sleep(payload["sleep"])
    with _runs_lock:
        RUNS[job_id] += 1
    return {}


def register(runtime: Any) -> None:
    """The benchmark's job kinds, on this runtime only (its handler table is a dict per runtime)."""
    for handler in HANDLERS:
        runtime.job_handlers[f"bench.{handler}"] = bench_handler


def measure(runtime: Any, handler: str, workers: int, jobs: int) -> dict[str, Any]:
    kind = f"bench.{handler}"
    job_ids = [queue.enqueue(runtime.engine, kind, {"sleep": HANDLERS[handler]}, clock=runtime.clock) for _ in range(jobs)]
    barrier = threading.Barrier(workers + 1)

    def work(index: int) -> None:
        barrier.wait()
        run_until_idle(runtime, f"bench-{handler}-{workers}-{index}", kinds=[kind])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    twice = sum(1 for job_id in job_ids if RUNS[job_id] != 1)
    return {"handler": handler, "workers": workers, "jobs": jobs, "seconds": seconds, "rate": jobs / seconds, "not_once": twice}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=400)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args(argv)
    isolate()
    runtime = scratch_runtime()
    register(runtime)
    workers = sorted(set(args.workers) | {1})

    print(f"{'handler':<9} {'workers':>7} {'jobs':>5} {'seconds':>8} {'jobs/s':>8} {'vs 1 worker':>11} {'ran != once':>11}")
    for handler in HANDLERS:
        print_rows([measure(runtime, handler, count, args.jobs) for count in workers])

    print(f"\n{'commit':<9} {'workers':>7} {'jobs':>5} {'seconds':>8} {'jobs/s':>8} {'vs sync':>11} {'ran != once':>11}")
    asynchronous = queue.ASYNC_COMMIT
    queue.ASYNC_COMMIT = text("SET LOCAL synchronous_commit = on")
    rows = [measure(runtime, "noop", 1, args.jobs)]
    queue.ASYNC_COMMIT = asynchronous
    rows.append(measure(runtime, "noop", 1, args.jobs))
    rows[0]["handler"], rows[1]["handler"] = "sync", "async"
    print_rows(rows)


def figures(runtime: Any, quick: bool) -> list[Figure]:
    register(runtime)
    jobs = 100 if quick else 400
    out = []
    for handler in HANDLERS:
        rows = [measure(runtime, handler, workers, jobs) for workers in (1, 2)]
        for row in rows:
            out.append(Figure(f"queue throughput, {handler} handler, {row['workers']} worker(s)", row["rate"], "jobs/s",
                              baseline="1 worker", baseline_value=rows[0]["rate"]))
        twice = sum(row["not_once"] for row in rows)
        out.append(Figure(f"queue jobs not run exactly once, {handler} handler", twice, "count", *check(twice, "==", 0)))
    return out


def print_rows(rows: list[dict[str, Any]]) -> None:
    """One line per configuration, with jobs/s relative to the first row."""
    baseline = rows[0]["rate"]
    for row in rows:
        print(
            f"{row['handler']:<9} {row['workers']:>7} {row['jobs']:>5} {row['seconds']:>8.2f} "
            f"{row['rate']:>8.1f} {row['rate'] / baseline:>10.2f}x {row['not_once']:>11}"
        )


if __name__ == "__main__":
    main()

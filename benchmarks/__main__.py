"""Every benchmark in one run, one table: `python -m benchmarks [--quick] [--json FILE]`.

Each figure comes with its target (from issue #13 / #15, or "-" when it only informs) and
a ratio against a baseline measured in the same run. Everything runs on throwaway data
dirs (benchmarks/isolated.py), never the lab's `.data`, with the offline model. `--quick`
uses smaller tables and fewer repetitions (under 3 minutes); the full run is the reference
(its recall table has 1,000,000 rows). `--only NAME ...` runs some of the sections.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from benchmarks import (cache_share, cold_start, e2e_recall, lab_turn_parallel, load_test, mem0_search,
                        queue_throughput, recall_latency)
from benchmarks.figures import Figure, load_average, table, write_json
from benchmarks.isolated import isolate
from runtime import Runtime
from scratch import scratch_runtime

SECTIONS: dict[str, Callable[[Runtime, bool], list[Figure]]] = {
    "cold_start": lambda _runtime, quick: cold_start.figures(quick),  # own servers, own data dirs
    "recall": recall_latency.figures,
    "e2e_recall": e2e_recall.figures,
    "mem0_vs_custom": mem0_search.figures,
    "lab_turn": lab_turn_parallel.figures,
    "queue": queue_throughput.figures,
    "cache_share": cache_share.figures,
    "load_test": load_test.figures,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller tables, fewer repetitions (< 3 minutes)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON to this file")
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), help="run only these sections")
    args = parser.parse_args(argv)
    root = isolate()
    runtime = scratch_runtime()
    figures: list[Figure] = []
    loads: list[list[float]] = []
    failed: list[str] = []
    started = time.perf_counter()
    for name, section in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        section_started = time.perf_counter()
        try:
            figures += section(runtime, args.quick)
        except Exception:  # noqa: BLE001 - one broken benchmark must not hide the others' figures
            failed.append(name)
            traceback.print_exc()
        loads.append(load_average())
        print(f"[{name}: {time.perf_counter() - section_started:.0f} s]", file=sys.stderr, flush=True)
    load = [round(max(sample[i] for sample in loads), 2) for i in range(3)] if loads else load_average()
    print(table(figures))
    print(f"\n{'quick' if args.quick else 'full'} run in {time.perf_counter() - started:.0f} s on throwaway data "
          f"({root}); highest load average seen (1/5/15 min): {load}")
    if failed:
        print(f"FAILED sections: {', '.join(failed)}")
    if args.json:
        write_json(args.json, figures, load)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

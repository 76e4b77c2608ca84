"""Benchmark: what the memory tool costs, against baselines measured in the same run.

    .venv/bin/python -m benchmarks.memory_tool_agent [--ops 200] [--turns 8]

Table 1: one memory command on the Postgres store vs the SDK's own local-filesystem
memory tool (`BetaLocalFilesystemMemoryTool`, the reference implementation) in a temp dir.
Table 2: a whole lab turn of the memory-tool agent vs the no-memory baseline, both on the
offline model (so the model itself costs ~nothing and the table shows our overhead: the
tool loop's extra model round trips, the file queries, persistence).

Runs on scratch storage (scratch.py: a throwaway data dir, or EVAL_DATA_DIR /
EVAL_DATABASE_URL), so it never writes benchmark users into the lab's data.
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable



def p50_ms(action: Callable[[int], object], runs: int) -> float:
    samples = []
    for n in range(runs):
        started = time.perf_counter()
        action(n)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def command_table(runtime, ops: int) -> list[tuple[str, float, float]]:
    # The SDK's reference implementation is not exported; the benchmark reaches into the module.
    from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

    from backends.memory_tool.store import MemoryFileStore
    from backends.memory_tool.tool import PostgresMemoryTool

    user = runtime.store.ensure_user(f"bench-{uuid.uuid4().hex[:8]}")
    ours = PostgresMemoryTool(MemoryFileStore(runtime.engine, user, runtime.clock, max_files=ops + 100))
    sdk_dir = tempfile.mkdtemp(prefix="memtool-sdk-")
    atexit.register(shutil.rmtree, sdk_dir, ignore_errors=True)
    sdk = BetaLocalFilesystemMemoryTool(sdk_dir)
    for tool in (ours, sdk):
        for n in range(50):
            tool.call({"command": "create", "path": f"/memories/seed/f{n}.md", "file_text": f"- fact {n}\n" * 20})
    cases: list[tuple[str, Callable[[object], Callable[[int], object]]]] = [
        ("create", lambda t: lambda n: t.call({"command": "create", "path": f"/memories/new/n{n}.md", "file_text": "- x\n"})),
        ("view file", lambda t: lambda n: t.call({"command": "view", "path": f"/memories/seed/f{n % 50}.md"})),
        ("view /memories (50+ files)", lambda t: lambda n: t.call({"command": "view", "path": "/memories"})),
        ("str_replace", lambda t: lambda n: t.call({"command": "str_replace", "path": f"/memories/new/n{n}.md",
                                                    "old_str": "- x", "new_str": "- y"})),
        ("insert", lambda t: lambda n: t.call({"command": "insert", "path": f"/memories/new/n{n}.md",
                                               "insert_line": 0, "insert_text": "- z"})),
        ("hostile path refused", lambda t: lambda n: _refused(t, "/memories/%2e%2e/%2e%2e/etc/passwd")),
    ]
    return [(name, p50_ms(make(ours), ops), p50_ms(make(sdk), ops)) for name, make in cases]


def _refused(tool, path: str) -> None:
    from anthropic.lib.tools import ToolError

    try:
        tool.call({"command": "view", "path": path})
    except ToolError:
        return
    raise AssertionError(f"{path} was not refused")


def turn_table(runtime, turns: int) -> list[tuple[str, float, float]]:
    from backends.base import TurnContext
    from backends.registry import build_backend

    texts = ["I'm building a Rust CLI called quickgrep; I finished the argument parser.", "I live in Pune.",
             "Next I'll write the matcher.", "Where was I with my project?"]
    rows = []
    for name in ("memory_tool", "none"):
        backend, user = build_backend(name, runtime), runtime.store.ensure_user(f"bench-{uuid.uuid4().hex[:8]}")
        rows.append((name, p50_ms(lambda n: backend.turn(TurnContext(user_id=user, text=texts[n % len(texts)])), turns)))
    return [("lab turn p50 (offline model)", rows[0][1], rows[1][1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--turns", type=int, default=8)
    args = parser.parse_args()
    from scratch import scratch_runtime
    from settings import get_settings

    runtime = scratch_runtime(llm_provider=get_settings().llm_provider or "offline")  # scratch data: never the lab's
    print(f"| memory command (p50 of {args.ops}) | Postgres store ms | SDK local files ms | ratio |")
    print("|---|---|---|---|")
    for name, ours, baseline in command_table(runtime, args.ops):
        print(f"| {name} | {ours:.2f} | {baseline:.2f} | {ours / baseline:.1f}x |")
    print()
    print(f"| turn (p50 of {args.turns}) | memory_tool ms | no-memory baseline ms | ratio |")
    print("|---|---|---|---|")
    for name, ours, baseline in turn_table(runtime, args.turns):
        print(f"| {name} | {ours:.1f} | {baseline:.1f} | {ours / baseline:.1f}x |")


if __name__ == "__main__":
    main()

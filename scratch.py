"""A throwaway lab for evals and benchmarks: their own data dir, database and runtime.

Why: an eval or a benchmark creates users by the hundred (one per case and backend); in
the lab's database they would crowd the user picker and mix with what a person made by
hand. Every entry point under evals/ and benchmarks/ builds its runtime here instead of
with `runtime.build_runtime()`, so the lab's `DATA_DIR` / `DATABASE_URL` are never opened.

By default the data dir is a fresh temp dir (its own embedded Postgres, Mem0 history and
logs), created once per process and removed at exit. `EVAL_DATA_DIR` keeps it somewhere
to inspect afterwards; `EVAL_DATABASE_URL` points the runs at a Postgres of their own.
The settings refuse either one when it equals the lab's.

    from scratch import scratch_runtime
    runtime = scratch_runtime()                       # offline or keyed, as configured
    runtime = scratch_runtime(llm_provider="offline") # with setting overrides

A top-level module beside runtime.py (it is wiring too), because evals/ and benchmarks/
are sibling layers that may not import each other.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from clock import Clock
from runtime import Runtime, build_runtime
from settings import Settings, get_settings, load_settings

SCRATCH_PREFIX = "memory-lab-scratch-"


@functools.lru_cache(maxsize=1)
def scratch_data_dir() -> Path:
    """This process's temp data dir, removed when the process exits.

    The clean-up is registered before any embedded server starts on the folder, so it runs
    after the server's own exit hook has stopped it (atexit runs last-registered first).
    """
    folder = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def scratch_settings(base: Settings | None = None, **overrides: object) -> Settings:
    """The settings with storage moved off the lab's: the eval data dir and database.

    Everything else (model, embedder, knobs) stays as configured, so an eval measures what
    the lab runs.
    """
    base = base or get_settings()
    storage = {
        "data_dir": base.eval_data_dir or scratch_data_dir(),
        "database_url": base.eval_database_url,
        "eval_data_dir": None,
        "eval_database_url": None,
    }
    return load_settings(**(base.model_dump() | overrides | storage))


def scratch_runtime(base: Settings | None = None, clock: Clock | None = None, **overrides: object) -> Runtime:
    """A runtime on the scratch storage, with a clock of its own (time travel stays here)."""
    return build_runtime(scratch_settings(base, **overrides), clock=clock or Clock())

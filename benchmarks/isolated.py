"""A throwaway data dir for benchmarks: they never write into the lab's own `.data`.

Benchmarks build their runtime with `scratch.scratch_runtime()` (the lab's shared helper
for evals and benchmarks: its own temp data dir, or EVAL_DATA_DIR / EVAL_DATABASE_URL).
Every benchmark entry point also calls `isolate()` first: it points DATA_DIR at a fresh temp
dir (removed at exit), pins the offline model, and drops DATABASE_URL and API keys, so
nothing a benchmark does can reach the lab's data or bill a real model, and a child process
(the cold-start benchmark runs `streamlit run`) gets the same isolation from `environment()`.
Settings are read once per process (`settings.get_settings` is cached), so the cache is
cleared here too.

Writing the environment (never reading configuration from it) is the one channel settings
and Mem0 take before they are imported; this module is the only benchmark code that does it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from settings import get_settings

DROPPED = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DATABASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "EMBEDDER",
           "LLM_PROVIDER")
_root: Path | None = None


def throwaway_dir(prefix: str = "memory-lab-bench-") -> Path:
    """A new temp dir, removed when the process exits (after the embedded server's own exit
    hook, which was registered later and so runs first)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def environment(data_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for a child process: this data dir, the offline model, local MiniLM."""
    env = {key: value for key, value in (base if base is not None else os.environ).items() if key not in DROPPED}
    env.update({"DATA_DIR": str(data_dir), "LLM_PROVIDER": "offline", "EMBEDDER": "local", "MEM0_TELEMETRY": "false",
                "MEM0_DIR": str(data_dir / "mem0"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    return env


def isolate() -> Path:
    """Isolate this process (idempotent: the first call's data dir is kept); returns it."""
    global _root
    if _root is None:
        _root = throwaway_dir()
        isolated = environment(_root)
        for key in DROPPED:
            os.environ.pop(key, None)
        os.environ.update(isolated)
        get_settings.cache_clear()
    return _root


def is_isolated() -> bool:
    return _root is not None

"""The one door to the `mem0` library: every import of it goes through `memory_class()`.

Mem0 reads two environment variables at import time: `MEM0_TELEMETRY` (on by default: it
posts events to PostHog, fetches a notice file from the internet, and stalls process exit
for about 10 s offline) and `MEM0_DIR` (where it writes config.json; default ~/.mem0).
Both must be set before the first `import mem0`, so no other module imports it directly.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from settings import Settings

_lock = threading.Lock()


def mem0_dir(settings: Settings) -> Path:
    """Mem0's own files (config.json, the SQLite history) live inside the lab's data dir."""
    return (settings.data_dir / "mem0").resolve()


def _prepare_environment(settings: Settings) -> None:
    # Writing (never reading) the environment: it is Mem0's only configuration channel
    # for these two switches. Telemetry is forced off even if the caller set it on.
    os.environ["MEM0_TELEMETRY"] = "false"
    if "mem0" not in sys.modules:
        directory = mem0_dir(settings)
        directory.mkdir(parents=True, exist_ok=True)
        os.environ["MEM0_DIR"] = str(directory)


def memory_class(settings: Settings) -> Any:
    """`mem0.Memory`, imported with telemetry off and MEM0_DIR inside the data dir."""
    with _lock:
        _prepare_environment(settings)
        from mem0 import Memory
        from mem0.memory import telemetry

    if telemetry.MEM0_TELEMETRY:  # imported earlier by someone else with telemetry on
        raise RuntimeError("mem0 was imported before MEM0_TELEMETRY=false was set; import it only via backends.mem0_backend.library")
    return Memory


def json_helpers(settings: Settings) -> tuple[Any, Any]:
    """Mem0's own `remove_code_blocks` and `extract_json` (how its add reads an answer)."""
    memory_class(settings)  # the environment first
    from mem0.memory.utils import extract_json, remove_code_blocks

    return remove_code_blocks, extract_json

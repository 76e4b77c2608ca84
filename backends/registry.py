"""The backends the lab, the evals and the benchmarks can run, by name.

Names are the public ones used on the command line (`--backend custom`) and in eval
JSON. Modules are imported on demand so a lab that shows only the baseline never loads
Mem0.
"""

from __future__ import annotations

import importlib

from backends.base import MemoryBackend
from backends.runtime import Runtime

BACKENDS: dict[str, str] = {
    "none": "backends.baseline:BaselineBackend",
}
"""name -> "module:Class"; each class takes a Runtime."""

DISPLAY_ORDER = ["mem0", "custom", "memory_tool", "none"]


def backend_names() -> list[str]:
    return [name for name in DISPLAY_ORDER if name in BACKENDS]


def build_backend(name: str, runtime: Runtime) -> MemoryBackend:
    if name not in BACKENDS:
        raise KeyError(f"Unknown backend {name!r}: choose from {', '.join(backend_names())}")
    module_name, class_name = BACKENDS[name].split(":")
    backend_class = getattr(importlib.import_module(module_name), class_name)
    return backend_class(runtime)

"""The backends the lab, the evals and the benchmarks can run, by name.

Names are the public ones used on the command line (`--backend custom`) and in eval
JSON. Modules are imported on demand so a lab that shows only the baseline never loads
Mem0.
"""

from __future__ import annotations

import importlib
import importlib.util

from backends.base import MemoryBackend
from backends.runtime import Runtime

BACKENDS: dict[str, str] = {
    "mem0": "backends.mem0_backend.backend:Mem0Backend",
    "custom": "backends.custom.backend:CustomPipelineBackend",
    "memory_tool": "backends.memory_tool.backend:MemoryToolBackend",
    "none": "backends.baseline:BaselineBackend",
}
"""name -> "module:Class"; each class takes a Runtime. Display order is this order."""


def _installed(target: str) -> bool:
    module_name = target.split(":")[0]
    try:
        return importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:
        return False


def backend_names() -> list[str]:
    """The backends present in this checkout, in display order."""
    return [name for name, target in BACKENDS.items() if _installed(target)]


def build_backend(name: str, runtime: Runtime) -> MemoryBackend:
    if name not in backend_names():
        raise KeyError(f"Unknown backend {name!r}: choose from {', '.join(backend_names())}")
    module_name, class_name = BACKENDS[name].split(":")
    backend_class = getattr(importlib.import_module(module_name), class_name)
    return backend_class(runtime)

"""The backends the lab, the evals and the benchmarks can run, by name, in display order.

Names are the public ones used on the command line (`--backend custom`) and in eval JSON.
Each line is one backend's plugin (see `backends.plugin`); Mem0's plugin does not import
the `mem0` library itself, so listing backends stays cheap.
"""

from __future__ import annotations

from backends.base import MemoryBackend
from backends.baseline import PLUGIN as BASELINE
from backends.custom.plugin import PLUGIN as CUSTOM
from backends.mem0_backend.plugin import PLUGIN as MEM0
from backends.memory_tool.plugin import PLUGIN as MEMORY_TOOL
from backends.plugin import BackendPlugin, JobHandler, PeriodicHook
from backends.services import Services

PLUGINS: tuple[BackendPlugin, ...] = (MEM0, CUSTOM, MEMORY_TOOL, BASELINE)


def backend_names() -> list[str]:
    return [plugin.name for plugin in PLUGINS]


def build_backend(name: str, services: Services) -> MemoryBackend:
    by_name = {plugin.name: plugin for plugin in PLUGINS}
    if name not in by_name:
        raise KeyError(f"Unknown backend {name!r}: choose from {', '.join(backend_names())}")
    return by_name[name].build(services)


def job_handlers() -> dict[str, JobHandler]:
    """Every backend's job kinds -> handler (a kind belongs to exactly one backend)."""
    handlers: dict[str, JobHandler] = {}
    for plugin in PLUGINS:
        clash = handlers.keys() & plugin.job_handlers.keys()
        if clash:
            raise ValueError(f"Job kinds {sorted(clash)} are registered by two backends")
        handlers.update(plugin.job_handlers)
    return handlers


def periodic_hooks() -> dict[str, PeriodicHook]:
    return {f"{plugin.name}.{name}": hook for plugin in PLUGINS for name, hook in plugin.periodic_hooks.items()}

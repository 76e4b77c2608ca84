"""The application wiring: settings -> database, embedder, models -> backends, job queue.

The top of the layer stack (only the app, the pages, the evals and the benchmarks import
it). `Runtime` is the services every backend is built from, plus what only the wiring can
know: which queue `enqueue` writes to, and every backend's job handlers and periodic
hooks, collected from the registry. Tests build an isolated one (own clock, own settings);
the lab shares one across Streamlit reruns.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from backends import registry
from backends.plugin import JobHandler, PeriodicHook
from backends.services import Services
from clock import Clock, clock as process_clock
from db.engine import make_engine
from db.schema import ensure_schema
from embeddings import get_embedder
from jobs import queue
from jobs.sweep import SWEEP_KIND, run_sweep
from settings import Settings, get_settings


@dataclass
class Runtime(Services):
    def enqueue(self, kind: str, payload: dict[str, Any], user_id: str | None = None) -> int:
        return queue.enqueue(self.engine, kind, payload, user_id=user_id, clock=self.clock,
                             max_attempts=self.settings.job_max_attempts)

    @functools.cached_property
    def job_handlers(self) -> dict[str, JobHandler]:
        """kind -> handler: every backend's, plus the lab's own nightly sweep. A dict per
        runtime, so a test can register a kind on its own runtime."""
        return {**registry.job_handlers(), SWEEP_KIND: run_sweep}

    @functools.cached_property
    def periodic_hooks(self) -> dict[str, PeriodicHook]:
        return registry.periodic_hooks()


def build_runtime(settings: Settings | None = None, clock: Clock | None = None) -> Runtime:
    settings = settings or get_settings()
    embedder = get_embedder(settings)
    engine = make_engine(settings)
    ensure_schema(engine, embedder.dimension)
    return Runtime(settings=settings, engine=engine, embedder=embedder, clock=clock or process_clock)


@functools.lru_cache(maxsize=1)
def get_runtime() -> Runtime:
    """The process-wide runtime (the lab caches it across reruns too)."""
    return build_runtime()

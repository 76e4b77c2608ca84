"""What a backend brings to the lab, declared in one place (its package's `plugin.py`):
how to build its column, the background job kinds it owns and their handlers, and the
periodic hooks the scheduler calls for it. The registry lists one plugin per backend, so
adding a backend is one folder and one registry line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from backends.base import MemoryBackend
from backends.services import Services

JobHandler = Callable[[Services, dict[str, Any], int | None], "dict[str, Any] | None"]
"""`handler(services, payload, job_id) -> result`; must be idempotent (a job may run twice)."""
PeriodicHook = Callable[[Services], object]
"""Called every ~30 s by the scheduler; must only ENQUEUE work, cheaply and safely in many processes."""


@dataclass(frozen=True)
class BackendPlugin:
    name: str
    build: Callable[[Services], MemoryBackend]
    job_handlers: Mapping[str, JobHandler] = field(default_factory=dict)
    periodic_hooks: Mapping[str, PeriodicHook] = field(default_factory=dict)

"""The offline model: a local, deterministic, rule-based emulator of the Anthropic Messages API.

Why: no local chat model can be installed on the lab's machines, yet the app, its tests and its
evals must run with no API key and no network. This package serves the Messages API on loopback
so the official ``anthropic`` SDK (and Mem0's Anthropic adapter) run unchanged against it.

Public entry points::

    from offline_model import start_offline_model, ensure_running
    server = start_offline_model()          # new server on 127.0.0.1:<ephemeral port>
    client = anthropic.Anthropic(api_key="offline", base_url=server.base_url)
    server.stop()

    server = ensure_running()               # process-wide singleton (never stopped explicitly)
"""

from __future__ import annotations

from typing import Any

from .faults import FAULT_HEADER, FaultConfig
from .cache import DEFAULT_MIN_CACHEABLE_TOKENS


def __getattr__(name: str) -> Any:
    """Import the server lazily: the rule modules stay importable without starlette/uvicorn loaded."""
    if name in ("OfflineModelServer", "ensure_running", "start_offline_model"):
        from . import server

        return getattr(server, name)
    raise AttributeError(name)

LABEL = "offline model (rule-based)"  # the model label a person sees under each reply

__all__ = [
    "OfflineModelServer",
    "ensure_running",
    "start_offline_model",
    "FaultConfig",
    "FAULT_HEADER",
    "DEFAULT_MIN_CACHEABLE_TOKENS",
    "LABEL",
]

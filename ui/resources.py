"""What the lab starts once per server process: the runtime, the backends, the scheduler.

`st.cache_resource` shares them across reruns and sessions. The first start can take a
few seconds (initdb of the embedded Postgres, loading MiniLM), so `start()` shows each
step in a status box the first time and nothing afterwards.
"""

from __future__ import annotations

import threading
from typing import Any

import streamlit as st

from backends.base import MemoryBackend
from backends.registry import backend_names, build_backend
from chat.errors import log_error, plain_error
from jobs.scheduler import start_scheduler
from runtime import Runtime, get_runtime
from settings import get_settings

_started = threading.Event()


@st.cache_resource(show_spinner=False)
def runtime() -> Runtime:
    return get_runtime()


@st.cache_resource(show_spinner=False)
def backend(name: str) -> MemoryBackend:
    """One backend object per process (exceptions are not cached: a failing build is retried)."""
    return build_backend(name, runtime())


@st.cache_resource(show_spinner=False)
def scheduler() -> Any:
    """The APScheduler that triggers queued work and the nightly sweep."""
    return start_scheduler(runtime())


def available_backends() -> list[str]:
    return backend_names()


def load_backends(names: list[str]) -> tuple[dict[str, MemoryBackend], dict[str, str]]:
    """Build the named backends; one that fails to build is reported, the others still run."""
    built: dict[str, MemoryBackend] = {}
    failed: dict[str, str] = {}
    for name in names:
        try:
            built[name] = backend(name)
        except Exception as error:  # noqa: BLE001 - shown in that backend's column, not as a traceback
            log_error(f"building backend {name}", error)
            failed[name] = plain_error(error)
    return built, failed


def start() -> Runtime:
    """The runtime, showing progress on the first start of this process."""
    if _started.is_set():
        return runtime()
    with st.status("Starting the lab…", expanded=True) as status:
        st.write("Reading settings…")
        get_settings()
        st.write("Starting the database (first start runs initdb, a few seconds)…")
        lab_runtime = runtime()
        st.write("Loading the embedding model (MiniLM)…")
        lab_runtime.embedder.embed_batch(["warm-up"])
        st.write("Starting the background scheduler…")
        try:
            scheduler()
        except Exception as error:  # noqa: BLE001 - the chat works without it; the Jobs page says more
            log_error("starting the scheduler", error)
            st.warning(f"The background scheduler did not start: {plain_error(error)}")
        status.update(label="Lab ready", state="complete", expanded=False)
    _started.set()
    return lab_runtime

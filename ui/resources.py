"""What the lab starts once per server process: the runtime, the backends, the models, the scheduler.

The start is a few independent steps run concurrently in background threads (`Startup`):
the database (initdb on a fresh data dir, then the schema), the embedding model (importing
torch and loading MiniLM, the slowest), the offline model's loopback server, then, once the
database is up, the backends (Mem0 connects and checks its tables) and the scheduler. The
page needs only the database and the backend objects to draw the user picker, the columns
and the chat input; while the rest is still loading, a status box says which step is at
which point and refreshes itself. A message sent before MiniLM is loaded waits for it
(the embedder's own lock), so nothing is refused during the start.

Everything here is process-wide (module state behind a lock, not `st.cache_resource`):
background threads have no Streamlit script context, and every session shares one start.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from backends.base import MemoryBackend
from backends.registry import backend_names, build_backend
from chat.errors import log_error, plain_error
from embeddings import get_embedder
from jobs.scheduler import start_scheduler
from llm.provider import offline_base_url
from runtime import Runtime, get_runtime
from settings import get_settings

REFRESH_SECONDS = 0.5
NEEDED = ("database", "backends")
"""Steps the page cannot be drawn without; the others finish while it is in use."""


@dataclass
class Step:
    label: str
    future: Future[Any]
    started: float = field(default_factory=time.perf_counter)
    seconds: float | None = None

    def line(self) -> str:
        if not self.future.done():
            return f"⏳ {self.label}… {time.perf_counter() - self.started:.1f} s"
        if self.future.exception() is not None:
            return f"⚠️ {self.label}: {plain_error(self.future.exception())}"
        return f"✅ {self.label} ({self.seconds:.1f} s)"


class Startup:
    """The lab's start, one background thread per independent step."""

    def __init__(self) -> None:
        self.settings = get_settings()  # in the caller's thread: a settings error is one line at once
        self._pool = ThreadPoolExecutor(max_workers=5, thread_name_prefix="lab-start")
        self.steps: dict[str, Step] = {}
        self._add("database", "Starting the database (a fresh data dir runs initdb first)", get_runtime)
        self._add("embedder", "Loading the embedding model (MiniLM)", get_embedder(self.settings).warm_up)
        if self.settings.is_offline:
            self._add("offline", "Starting the offline model", lambda: offline_base_url(self.settings))
        self._add("backends", "Building the backends", self._build_backends)
        self._add("connect", "Connecting the backends (Mem0's tables and pool)", self._warm_backends)
        self._add("scheduler", "Starting the background scheduler", self._start_scheduler)

    def _add(self, name: str, label: str, action: Callable[[], Any]) -> None:
        step = Step(label, Future())

        def run() -> Any:
            step.started = time.perf_counter()
            try:
                return action()
            except Exception as error:
                log_error(f"starting the lab: {name}", error)
                raise
            finally:
                step.seconds = time.perf_counter() - step.started

        step.future = self._pool.submit(run)
        self.steps[name] = step

    def _build_backends(self) -> dict[str, MemoryBackend]:
        """Every backend that builds; one that fails is retried and reported in its column."""
        self.steps["database"].future.result()
        return load_backends(backend_names())[0]

    def _warm_backends(self) -> None:
        for built in self.steps["backends"].future.result().values():
            built.warm_up()

    def _start_scheduler(self) -> Any:
        self.steps["database"].future.result()
        return scheduler()

    # -- state ----------------------------------------------------------------------------
    def ready(self, names: tuple[str, ...] | None = None) -> bool:
        return all(self.steps[name].future.done() for name in (names or tuple(self.steps)) if name in self.steps)

    def failed(self, name: str) -> BaseException | None:
        step = self.steps.get(name)
        return step.future.exception() if step is not None and step.future.done() else None

    def lines(self) -> list[str]:
        return [step.line() for step in self.steps.values()]


_startup: Startup | None = None
_startup_lock = threading.Lock()
_backends: dict[str, MemoryBackend] = {}
_backends_lock = threading.Lock()
_scheduler: Any = None
_scheduler_lock = threading.Lock()


def startup() -> Startup:
    """The process's start (begun by the first page run; later runs see its progress)."""
    global _startup
    with _startup_lock:
        if _startup is None:
            _startup = Startup()
        return _startup


def _forget_failed_start() -> None:
    """A start whose database step failed is dropped, so the next page run tries again."""
    global _startup
    with _startup_lock:
        _startup = None


def runtime() -> Runtime:
    return get_runtime()


def backend(name: str) -> MemoryBackend:
    """One backend object per process (exceptions are not kept: a failing build is retried)."""
    with _backends_lock:
        if name not in _backends:
            _backends[name] = build_backend(name, runtime())
        return _backends[name]


def scheduler() -> Any:
    """The APScheduler that triggers queued work and the nightly sweep (one per process)."""
    global _scheduler
    with _scheduler_lock:
        if _scheduler is None:
            _scheduler = start_scheduler(runtime())
        return _scheduler


def stop_scheduler() -> None:
    """Stop this process's scheduler, if it started one; the next page run starts a new one."""
    global _scheduler
    with _scheduler_lock:
        if _scheduler is not None and _scheduler.running:
            _scheduler.shutdown(wait=False)
        _scheduler = None


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


# -- the status box ---------------------------------------------------------------------------
def _draw(boot: Startup, placeholder: Any) -> None:
    done = boot.ready()
    with placeholder.container():
        label = "Lab ready" if done else "Starting the lab…"
        with st.status(label, expanded=not done, state="complete" if done else "running"):
            for line in boot.lines():
                st.write(line)
            if not done and boot.ready(NEEDED):
                st.caption("You can type now: a message sent before the models are loaded waits for them.")


@st.fragment(run_every=REFRESH_SECONDS)
def _progress() -> None:
    """Redraws itself until every step is done, then reruns the page once (which drops it)."""
    boot = startup()
    _draw(boot, st.empty())
    if boot.ready():
        st.rerun(scope="app")


def start() -> Runtime:
    """The runtime, once the database and the backends are up, showing the start's progress."""
    boot = startup()
    if boot.ready():
        _raise_if_failed(boot)
        return runtime()
    placeholder = st.empty()
    while not boot.ready(NEEDED):
        _draw(boot, placeholder)
        time.sleep(REFRESH_SECONDS / 2)
    placeholder.empty()
    _raise_if_failed(boot)
    if not boot.ready():
        _progress()
    elif boot.failed("scheduler") is not None:
        _draw(boot, st.empty())
    return runtime()


def _raise_if_failed(boot: Startup) -> None:
    """A failed database step stops the page (one line, by the caller); it is retried next run."""
    error = boot.failed("database")
    if error is not None:
        _forget_failed_start()
        raise error

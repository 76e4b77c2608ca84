"""Test setup: a private embedded Postgres per test run, the offline model, no network.

The environment is set before any project module is imported, because settings are
read once per process.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

_DATA_DIR = Path(tempfile.mkdtemp(prefix="memory-lab-test-"))
os.environ["DATA_DIR"] = str(_DATA_DIR)
os.environ["LLM_PROVIDER"] = "offline"
os.environ["EMBEDDER"] = "local"
for _name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DATABASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
    os.environ.pop(_name, None)
os.environ["MEM0_TELEMETRY"] = "false"
os.environ["MEM0_DIR"] = str(_DATA_DIR / "mem0")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import pytest  # noqa: E402

from runtime import Runtime, build_runtime  # noqa: E402
from clock import Clock  # noqa: E402


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return _DATA_DIR


@pytest.fixture(scope="session")
def runtime() -> Runtime:
    """The real embedded Postgres, local MiniLM and the offline model, shared by the run."""
    return build_runtime()


@pytest.fixture(scope="session")
def engine(runtime: Runtime):
    return runtime.engine


@pytest.fixture()
def test_clock() -> Clock:
    return Clock()


@pytest.fixture()
def isolated_runtime(runtime: Runtime, test_clock: Clock) -> Runtime:
    """The shared runtime with a private clock, for tests that travel in time."""
    return Runtime(settings=runtime.settings, engine=runtime.engine, embedder=runtime.embedder, clock=test_clock)


@pytest.fixture()
def user_id(runtime: Runtime) -> str:
    """A fresh user per test, so tests never see each other's data."""
    return runtime.store.ensure_user(f"u-{uuid.uuid4().hex[:12]}")


@pytest.fixture()
def make_user(runtime: Runtime):
    def _make(prefix: str = "u") -> str:
        return runtime.store.ensure_user(f"{prefix}-{uuid.uuid4().hex[:12]}")

    return _make

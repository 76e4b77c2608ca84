"""Fixtures for the queue tests: test-only job kinds and the tables their handlers write."""

from __future__ import annotations

import pytest

from backends import registry
from jobs.sweep import SWEEP_KIND, run_sweep
from runtime import Runtime
from tests.jobs.handlers import TEST_HANDLERS, create_tables


@pytest.fixture(autouse=True)
def test_job_kinds(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Every runtime of the test sees the application's handlers plus the test kinds."""
    handlers = {**registry.job_handlers(), SWEEP_KIND: run_sweep, **TEST_HANDLERS}
    monkeypatch.setattr(Runtime, "job_handlers", property(lambda _: handlers))
    return handlers


@pytest.fixture(scope="session")
def job_tables(engine) -> None:  # noqa: ANN001
    create_tables(engine)

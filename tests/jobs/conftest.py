"""Fixtures for the queue tests: test-only job kinds and the tables their handlers write."""

from __future__ import annotations

import pytest

from jobs import kinds
from tests.jobs.handlers import TEST_HANDLERS, create_tables


@pytest.fixture(autouse=True)
def test_job_kinds(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    handlers = {**kinds.JOB_HANDLERS, **TEST_HANDLERS}
    monkeypatch.setattr(kinds, "JOB_HANDLERS", handlers)
    return handlers


@pytest.fixture(scope="session")
def job_tables(engine) -> None:  # noqa: ANN001
    create_tables(engine)

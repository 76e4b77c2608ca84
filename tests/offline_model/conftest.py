"""Fixtures: one running emulator per test session (and a small-cache one), official SDK clients."""

from __future__ import annotations

import anthropic
import pytest

from offline_model import start_offline_model

MID_BETA = "mid-conversation-system-clear-at-2026-08-21"


class FakeClock:
    """Injectable time source for the prompt cache."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="session")
def server():
    srv = start_offline_model()
    yield srv
    srv.stop()


@pytest.fixture()
def client(server) -> anthropic.Anthropic:
    server.faults.clear()
    return anthropic.Anthropic(api_key="offline", base_url=server.base_url, max_retries=0)


@pytest.fixture()
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture()
def cache_server(clock):
    """A fresh server with its own cache and a fake clock (default 1024-token minimum)."""
    srv = start_offline_model(clock=clock)
    yield srv
    srv.stop()

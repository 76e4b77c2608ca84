"""The lab as a person runs it: `streamlit run app.py` on a free loopback port, in a child
process that inherits the test environment (private DATA_DIR, offline model, no API key),
and Debian's chromium driven by Playwright (no browser download)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
START_TIMEOUT_SECONDS = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(base_url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base_url}/_stcore/health", timeout=2).text == "ok":
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"streamlit did not become healthy in {START_TIMEOUT_SECONDS}s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def lab_url(data_dir: Path) -> Iterator[str]:
    """The run command's server (`make run` minus the venv step), on a free port.

    Module-scoped: the server runs the lab's scheduler, which polls the shared test
    database; left running, it would claim the job tests' test-only job kinds."""
    port = free_port()
    log = data_dir / f"streamlit-{port}.log"
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    assert "ANTHROPIC_API_KEY" not in environment
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true"]
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=REPO, env=environment, stdout=output, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def browser():
    """One Playwright per test module: the sync API cannot start a second one in the same
    thread while another is alive, and other folders' modules import this fixture."""
    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        yield chromium
    finally:
        chromium.close()
        playwright.stop()


@pytest.fixture()
def page(browser):
    """A tall viewport, so one screenshot holds every column and its chart."""
    context = browser.new_context(viewport={"width": 1600, "height": 3600})
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    yield tab
    context.close()


@pytest.fixture()
def shoot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def _shoot(tab, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        tab.screenshot(path=str(path), full_page=True)
        return path

    return _shoot

"""Cold start as a person sees it: `streamlit run app.py` until the chat input is usable.

    .venv/bin/python -m benchmarks.cold_start [--runs 1] [--turn]

Starts the run command's server (`make run` minus its venv step) in a child process on a
throwaway data dir, opens the page in Debian's chromium (Playwright, no browser download)
and times, from the spawn: the health endpoint answering, the first thing drawn on the
page (the start-up status), and the chat input visible and enabled. "fresh" is an empty
data dir (initdb, schema, Mem0's tables); "existing" restarts on the data dir the fresh
run left. `--turn` also sends one message and waits for a reply in every column, and
reads the lab process's peak RSS (VmHWM) after it.

The browser is launched before the server, so its own start is not counted.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from backends.registry import backend_names
from benchmarks.figures import Figure, check, load_average
from benchmarks.isolated import environment, throwaway_dir

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TIMEOUT_S = 180
REPLY = "Model: offline model (rule-based)"


@dataclass
class ColdStart:
    mode: str
    health_s: float
    first_paint_s: float
    input_s: float
    first_turn_s: float | None = None
    peak_rss_mb: float | None = None
    ready_rss_mb: float | None = None
    """Peak RSS when the chat input became usable (before any turn)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def peak_rss_mb(pid: int) -> float | None:
    """VmHWM: the process's peak resident set size (Linux)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _wait_healthy(url: str, process: subprocess.Popen, started: float) -> float:
    while time.perf_counter() - started < TIMEOUT_S:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/_stcore/health", timeout=1).text == "ok":
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError("streamlit never answered its health check")


def measure(browser, data_dir: Path, mode: str, turn: bool = False, repo: Path = REPO) -> ColdStart:  # noqa: ANN001 - a Playwright Browser
    from playwright.sync_api import expect

    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true"]
    log = (data_dir / f"streamlit-{mode}.log").open("w")
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=repo, env=environment(data_dir), stdout=log, stderr=subprocess.STDOUT)
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    try:
        url = f"http://127.0.0.1:{port}"
        health = _wait_healthy(url, process, started)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_S * 1000)
        page.goto(url)
        page.get_by_role("heading", name="Memory Lab", exact=True, level=1).wait_for()
        painted = time.perf_counter() - started
        box = page.get_by_test_id("stChatInputTextArea")
        expect(box).to_be_enabled(timeout=TIMEOUT_S * 1000)
        result = ColdStart(mode, health, painted, time.perf_counter() - started, ready_rss_mb=peak_rss_mb(process.pid))
        if turn:
            sent = time.perf_counter()
            box.fill("I live in Lisbon and I am vegetarian.")
            box.press("Enter")
            replies = page.get_by_test_id("stChatMessage").filter(has_text=REPLY)
            expect(replies).to_have_count(len(backend_names()), timeout=TIMEOUT_S * 1000)  # every backend is on by default
            result.first_turn_s = time.perf_counter() - sent
            result.peak_rss_mb = peak_rss_mb(process.pid)
        return result
    finally:
        context.close()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def run(runs: int = 1, turn: bool = False, repos: tuple[Path, ...] = (REPO,)) -> list[tuple[Path, ColdStart]]:
    """`runs` pairs of (fresh, existing) starts per checkout, each on its own throwaway data
    dir; several checkouts (`--compare-with`) take turns, so machine load hits them alike."""
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for _ in range(runs):
                for repo in repos:
                    data_dir = throwaway_dir("memory-lab-coldstart-")
                    results.append((repo, measure(browser, data_dir, "fresh", turn, repo)))
                    results.append((repo, measure(browser, data_dir, "existing", turn, repo)))
        finally:
            browser.close()
    return results


def figures(quick: bool) -> list[Figure]:
    """Fresh and existing data dir, one start each (the first turn and RSS on both)."""
    out = []
    for _, r in run(1, turn=True):
        limit = 15 if r.mode == "fresh" else 10
        out.append(Figure(f"cold start to a usable chat input, {r.mode} data dir", r.input_s, "s",
                          *check(r.input_s, "<=", limit), "server health answering", r.health_s))
        out.append(Figure(f"first turn in every column after a cold start, {r.mode} data dir", r.first_turn_s or float("nan"), "s"))
        if r.mode == "fresh" and r.peak_rss_mb is not None:
            out.append(Figure("peak RSS of the lab process (after a first turn)", r.peak_rss_mb, "MB",
                              baseline="at a usable chat input", baseline_value=r.ready_rss_mb))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--turn", action="store_true", help="also time a first turn and read the peak RSS")
    parser.add_argument("--compare-with", type=Path, nargs="*", default=[],
                        help="other checkouts (e.g. a git worktree of an older commit) measured in turn with this one")
    args = parser.parse_args(argv)
    print("| checkout | data dir | health s | page drawn s | chat input usable s | first turn s | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for repo, r in run(args.runs, args.turn, (REPO, *args.compare_with)):
        turn = f"{r.first_turn_s:.1f}" if r.first_turn_s is not None else "-"
        rss = f"{r.peak_rss_mb:.0f}" if r.peak_rss_mb is not None else "-"
        print(f"| {repo} | {r.mode} | {r.health_s:.1f} | {r.first_paint_s:.1f} | {r.input_s:.1f} | {turn} | {rss} |")
    print(f"load average {load_average()}")


if __name__ == "__main__":
    main()

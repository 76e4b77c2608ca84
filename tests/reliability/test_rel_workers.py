"""Workers (`python -m worker`'s loop) SIGKILLed at each step of each job kind: the job is
re-claimed after its lease and applied exactly once, and the turn's "Noted" event is still
written. And after every process has exited, killed ones included, the embedded server stops.

Before the fix a mem0.add re-run after a kill wrote no Noted event (Mem0 had stored the
memories before the kill; the re-run's add skipped them as duplicates), and the server's
handle file kept the killed workers' PIDs, so the server never stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from backends.registry import build_backend
from jobs import queue
from jobs.runner import drain
from runtime import Runtime
from tests.reliability.faults_support import FACT, Figure, new_user, noted_events, turn, user_jobs
from tests.reliability.kill_worker_main import STEPS

pytestmark = pytest.mark.reliability

REPO_ROOT = Path(__file__).resolve().parents[2]
KINDS = {"custom": "custom.extract", "mem0": "mem0.add"}
LEASE_SECONDS = 1.0
FACTS = 2  # FACT holds two facts


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "JOB_POLL_SECONDS": "0.1", "PYTHONUNBUFFERED": "1", **extra}


def _run_killed_worker(step: str, kind: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tests.reliability.kill_worker_main", step, "--once", "--no-periodic", "--kind", kind],
        cwd=REPO_ROOT, env=_env(JOB_LEASE_SECONDS=str(LEASE_SECONDS)), capture_output=True, text=True, timeout=300,
    )


@pytest.mark.parametrize("backend_name", sorted(KINDS))
def test_worker_killed_at_each_step_applies_once_and_notes(runtime: Runtime, backend_name: str):
    backend, kind = build_backend(backend_name, runtime), KINDS[backend_name]
    figure = Figure(f"{kind} worker SIGKILLed at each step")
    for step in STEPS:
        drain(runtime, max_seconds=60)  # no one else's ready job for the worker to pick first
        user = new_user(runtime, "rel-kill")
        result = turn(backend, user, FACT)
        assert result.error is None and result.jobs, result.error
        [job_id] = result.jobs
        worker = _run_killed_worker(step, kind)
        job = queue.get_job(runtime.engine, job_id)
        if not figure.check(f"{step}: the worker died at the step", worker.returncode == -signal.SIGKILL
                            and (job.state, job.attempts) == ("running", 1), (worker.returncode, job.state, job.attempts,
                                                                             worker.stderr[-300:])):
            continue
        time.sleep(LEASE_SECONDS + 0.2)  # the dead worker's lease runs out
        drain(runtime, user_id=user, max_seconds=60)
        states = [(j.state, j.attempts) for j in user_jobs(runtime, user)]
        figure.check(f"{step}: re-claimed and done", states == [("done", 2)], states)
        texts = backend.stored_texts(user)
        figure.check(f"{step}: applied exactly once", len(texts) == FACTS and len(set(texts)) == FACTS, texts)
        noted = [event for event in noted_events(runtime, user) if event.get("message_id") == result.user_message_id]
        figure.check(f"{step}: one Noted event with the facts", len(noted) == 1 and len(noted[0]["memories"]) == FACTS, noted)
    figure.report()


def _postmaster_pid(pgdata: Path) -> int | None:
    pid_file = pgdata / "postmaster.pid"
    return int(pid_file.read_text().splitlines()[0]) if pid_file.exists() else None


def _running(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_embedded_server_stops_after_killed_workers_and_the_last_exit():
    """A fresh data dir: two workers join the server and are SIGKILLed; one more process joins
    and exits normally; the server must stop then (its handle file pruned of the dead)."""
    data_dir = Path(tempfile.mkdtemp(prefix="memory-lab-rel-handles-"))
    env = _env(DATA_DIR=str(data_dir), MEM0_DIR=str(data_dir / "mem0"))
    join = [sys.executable, "-c", "import sys, time; from db.engine import embedded_server_url; from pathlib import Path; "
            "embedded_server_url(Path(sys.argv[1])); print('joined', flush=True); time.sleep(float(sys.argv[2]))"]
    pgdata, handles = data_dir / "pgdata", data_dir / "pgdata" / ".handle_pids.json"
    figure = Figure("embedded server stops after killed workers")
    workers = []
    for _ in range(2):
        worker = subprocess.Popen([*join, str(data_dir), "600"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True)
        assert worker.stdout.readline().strip() == "joined"
        workers.append(worker)
    server_pid = _postmaster_pid(pgdata)
    listed = json.loads(handles.read_text())
    figure.check("both workers hold a handle", all(w.pid in listed for w in workers) and _running(server_pid), listed)
    for worker in workers:
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    figure.check("the server outlives killed workers (another process may still join)", _running(server_pid), server_pid)
    last = subprocess.run([*join, str(data_dir), "0"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    figure.check("the last process joined and exited cleanly", last.returncode == 0, last.stderr[-300:])
    deadline = time.monotonic() + 30
    while _running(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    figure.check("the server stopped after the last exit", not _running(server_pid), server_pid)
    remaining = json.loads(handles.read_text() or "[]") if handles.exists() else []
    figure.check("no dead PID left in the handle file", remaining == [], remaining)
    if _running(server_pid):  # do not leave a server behind when the check failed
        os.kill(server_pid, signal.SIGTERM)
    figure.report()

"""`python -m worker`: run the queue in its own process.

The same loop as the lab's scheduler thread (`jobs.scheduler.poll_queue`), so any number
of workers and lab processes can share one database: the `jobs` table's SKIP LOCKED
claim and leases decide who runs what. SIGTERM or SIGINT finishes the job in hand and
exits 0; a second signal exits at once (the job's lease then hands it to another worker).
Logs name job ids and kinds only, never payload text.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType

from apscheduler.schedulers.background import BackgroundScheduler

from jobs.runner import new_worker_id, run_until_idle
from jobs.scheduler import Runtime, add_periodic_jobs, poll_queue

log = logging.getLogger("jobs.worker")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m worker", description=__doc__.splitlines()[0])
    parser.add_argument("--once", action="store_true", help="run every ready job, then exit")
    parser.add_argument("--worker-id", default=None, help="name in jobs.locked_by (default: host-pid-random)")
    parser.add_argument("--kind", action="append", dest="kinds", help="only run jobs of this kind (repeatable)")
    parser.add_argument(
        "--no-periodic", action="store_true", help="do not run periodic hooks or enqueue the nightly sweep here"
    )
    return parser.parse_args(argv)


def _install_signal_handlers(stop: threading.Event) -> None:
    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            log.warning("second %s: exiting now", signal.Signals(signum).name)
            raise SystemExit(1)
        log.info("%s: finishing the current job, then exiting", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)


def _start_periodic(runtime: Runtime) -> BackgroundScheduler:
    """Hooks and the nightly sweep on a background scheduler; the main thread does the polling."""
    scheduler = BackgroundScheduler(timezone="UTC")
    add_periodic_jobs(scheduler, runtime, poll=False)
    scheduler.start()
    return scheduler


def serve(runtime: Runtime, worker_id: str, stop: threading.Event, kinds: Sequence[str] | None = None) -> int:
    """Poll until `stop` is set; returns how many jobs ran."""
    ran = 0
    while not stop.is_set():
        batch = poll_queue(runtime, worker_id, stop.is_set, kinds)
        ran += batch
        if batch == 0:
            stop.wait(runtime.settings.job_poll_seconds)
    return ran


def main(runtime_factory: Callable[[], Runtime], argv: Sequence[str] | None = None) -> int:
    """The worker loop on the runtime the factory builds (the top-level `worker` module passes
    the application's; the tests pass one with test job kinds registered)."""
    args = parse_args(argv)
    # Libraries at WARNING: their INFO lines (HTTP requests, Mem0's inserts, server start-up)
    # are noise here and could quote user text; the queue's own lines are at INFO.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("jobs").setLevel(logging.INFO)
    stop = threading.Event()
    _install_signal_handlers(stop)
    runtime = runtime_factory()
    worker_id = args.worker_id or new_worker_id()
    if args.once:
        try:
            ran = run_until_idle(runtime, worker_id, kinds=args.kinds, should_stop=stop.is_set)
        except Exception as error:  # noqa: BLE001 - type only: SQL errors quote user text
            log.error("worker %s: queue failed (%s)", worker_id, type(error).__name__)
            return 1
        log.info("worker %s ran %d job(s); exiting", worker_id, ran)
        return 0
    periodic = None if args.no_periodic else _start_periodic(runtime)
    log.info("worker %s ready (poll every %.1fs)", worker_id, runtime.settings.job_poll_seconds)
    try:
        ran = serve(runtime, worker_id, stop, args.kinds)
    finally:
        if periodic is not None:
            periodic.shutdown(wait=False)
    log.info("worker %s stopped after %d job(s)", worker_id, ran)
    return 0


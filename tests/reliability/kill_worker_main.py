"""`python -m tests.reliability.kill_worker_main STEP ARGS`: the real worker (`jobs.worker.main`
on the application's runtime) that SIGKILLs itself at one step of a job, as an OOM kill or a
power cut would. Steps:

* ``claimed``        the job is claimed (attempt counted, lease taken), the handler not started
* ``model_call``     the handler is about to send its model request
* ``before_commit``  the model answered; the job's own transaction has not committed
                     (for mem0.add: Mem0 has already written its rows on its own connection)
* ``after_commit``   the handler's writes are committed; the job is not yet marked done
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from typing import Any

import anthropic._base_client

import backends.custom.jobs as custom_jobs
from backends.mem0_backend.store import Mem0Store
from jobs.worker import main
from runtime import Runtime, get_runtime

STEPS = ("claimed", "model_call", "before_commit", "after_commit")


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _before(function: Any) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        die()
        return function(*args, **kwargs)
    return wrapper


def _after(function: Any) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        die()
        return result
    return wrapper


def install(step: str, runtime: Runtime) -> None:
    if step == "claimed":
        for kind, handler in list(runtime.job_handlers.items()):
            runtime.job_handlers[kind] = _before(handler)
    elif step == "after_commit":
        for kind, handler in list(runtime.job_handlers.items()):
            runtime.job_handlers[kind] = _after(handler)
    elif step == "model_call":
        anthropic._base_client.SyncAPIClient.request = _before(anthropic._base_client.SyncAPIClient.request)
    elif step == "before_commit":
        custom_jobs.apply_operations = _before(custom_jobs.apply_operations)  # after the model, before the write
        Mem0Store.add = _after(Mem0Store.add)  # Mem0 committed its rows; our guard's transaction is still open
    else:
        raise SystemExit(f"unknown step {step!r}; expected one of {', '.join(STEPS)}")


if __name__ == "__main__":
    step, argv = sys.argv[1], sys.argv[2:]

    def runtime_that_dies() -> Runtime:
        runtime = get_runtime()
        install(step, runtime)
        return runtime

    sys.exit(main(runtime_that_dies, argv))

"""Job kinds and the function that runs each, by import path.

Strings rather than imports so the queue never imports a backend it does not run (Mem0
is slow to import). A handler is `handler(runtime, payload, job_id) -> dict | None`; the
returned dict is stored as the job's result. Handlers must be idempotent: a job whose
lease ran out is run again.
"""

JOB_HANDLERS: dict[str, str] = {
    "custom.extract": "backends.custom.jobs:run_extraction",
    "mem0.add": "backends.mem0_backend.jobs:run_add",
    "sweep": "jobs.sweep:run_sweep",
}

PERIODIC_HOOKS: list[str] = [
    "backends.custom.jobs:end_idle_sessions",  # end-of-session extraction (EXTRACT_WHEN=session)
]
"""Functions the scheduler calls periodically, as "module:function"; each takes the Runtime.

Hooks only ENQUEUE work (e.g. end-of-session extraction for idle conversations), so they
must be cheap and safe to run in several processes at once. A hook that cannot be
imported is logged once and skipped.
"""

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

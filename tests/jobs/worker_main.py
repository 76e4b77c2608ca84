"""`python -m tests.jobs.worker_main ARGS`: the real `jobs.worker` with the test kinds registered.

A subprocess does not see the test's monkeypatch, so this entry point adds the test-only
handlers to `JOB_HANDLERS` and then runs the unchanged worker `main`.
"""

import sys

from jobs import kinds
from tests.jobs.handlers import TEST_HANDLERS

kinds.JOB_HANDLERS.update(TEST_HANDLERS)

from jobs.worker import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

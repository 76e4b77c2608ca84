"""`python -m tests.jobs.worker_main ARGS`: the real worker loop with the test kinds registered.

A subprocess does not see the test's fixtures, so this entry point builds the application's
runtime, adds the test-only handlers to its handler table, and runs the unchanged `main`.
"""

import sys

from jobs.worker import main
from runtime import Runtime, get_runtime
from tests.jobs.handlers import TEST_HANDLERS


def runtime_with_test_kinds() -> Runtime:
    runtime = get_runtime()
    runtime.job_handlers.update(TEST_HANDLERS)
    return runtime


if __name__ == "__main__":
    sys.exit(main(runtime_with_test_kinds, sys.argv[1:]))

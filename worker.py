"""`python -m worker`: a background worker process on the application's runtime (see jobs.worker)."""

import sys

from jobs.worker import main
from runtime import get_runtime

if __name__ == "__main__":
    sys.exit(main(get_runtime, sys.argv[1:]))

"""`python -m evals.run`: the eval cases through the backends, a category x backend table.

Runs on the configured model (the offline model when no key is set). Exit status 0 when
it ran, whatever the scores: a low score is a measurement, not a crash; a bad case file
or an unavailable backend is an error (status 2) with a one-line message.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from backends.base import Knobs
from evals.runner import BackendUnavailable, EvalRunner, check_backends, eval_runtime, stderr_progress
from evals.schema import DEFAULT_CASES_DIR, CaseFileError, load_cases
from evals.scores import table, write_json
from settings import SettingsError, get_settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.run", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", action="extend", metavar="PATH",
                        help=f"case files or folders (default: {DEFAULT_CASES_DIR})")
    parser.add_argument("--backend", nargs="+", action="extend", metavar="NAME",
                        help="backends to run (default: every available one)")
    parser.add_argument("--min-similarity", type=float, metavar="X", help="recall threshold (default: MIN_SIMILARITY)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write scores and per-case results here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cases = load_cases(args.cases or [DEFAULT_CASES_DIR])
        backends = check_backends(args.backend or [])
        settings = get_settings()
        overrides = {} if args.min_similarity is None else {"min_similarity": args.min_similarity}
        knobs = Knobs.from_settings(settings, **overrides)
    except (CaseFileError, BackendUnavailable, SettingsError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stderr_progress(f"{len(cases)} cases x {len(backends)} backends ({', '.join(backends)}), "
                    f"model: {settings.public_summary()['chat_model']}, min_similarity {knobs.min_similarity}")
    runner = EvalRunner(eval_runtime(settings), knobs, stderr_progress)
    results = runner.run(cases, backends)
    print(table(results))
    if args.json:
        write_json(results, args.json)
        stderr_progress(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

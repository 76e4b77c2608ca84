"""Evals: multi-session cases scored per category and backend, the MIN_SIMILARITY sweep
and the LoCoMo benchmark.

Memory degrades silently, so the lab measures it: `python -m evals.run` prints a score
per category for each backend, from YAML cases in `evals/cases/` (format in
`evals.schema`, kept compatible with issue 7's contract).
"""

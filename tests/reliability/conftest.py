"""The reliability suite: every test here is marked `reliability` and reports a figure.

`pytest -m reliability` selects the suite (it also runs in the normal `pytest`). A test
states what it tried and how many of those tries failed with the `record_figure` fixture:

    def test_something(record_figure):
        tried, failures = run_my_checks()
        record_figure("my check: what was tried", tried, failures)

`failures` is a count or a list of short descriptions (the first few are shown). A figure
with failures fails the test (`must_pass=False` records without failing). The figure is
printed when it is recorded and again, with every other figure of the run, in one table at
the end of the session.

A test that prints its own line instead, `FIGURE <name>: tried <n>, failed <m>` (as
`faults_support.Figure.report` does), is collected into the same table from its captured
output, so either way of reporting ends up in the summary.

Property tests take their hypothesis settings from the `fuzz_settings` fixture: a few
hundred examples by default, 10,000 with `RELIABILITY_PROFILE=long` (an environment variable
because hypothesis' own `--hypothesis-profile` option is read before this conftest loads):

    RELIABILITY_PROFILE=long .venv/bin/python -m pytest -m reliability
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

HERE = Path(__file__).resolve().parent
SHOWN_FAILURES = 5

_QUIET = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
PROFILES = {
    "default": settings(max_examples=300, deadline=None, suppress_health_check=_QUIET, derandomize=True, database=None),
    "long": settings(max_examples=10_000, deadline=None, suppress_health_check=_QUIET, database=None),
}


@dataclass(frozen=True)
class Figure:
    test: str
    name: str
    tried: int
    failed: int
    examples: tuple[str, ...] = ()

    def line(self) -> str:
        shown = "; ".join(self.examples[:SHOWN_FAILURES])
        return f"{self.name}: tried {self.tried:,}, failed {self.failed:,}" + (f" (e.g. {shown})" if shown else "")


FIGURES: list[Figure] = []
FIGURE_LINE = re.compile(r"^FIGURE (?P<name>.+?): tried (?P<tried>[\d,]+), failed (?P<failed>[\d,]+)", re.M)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/reliability is part of the suite, whoever wrote the file."""
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.reliability)


@pytest.fixture(scope="session")
def fuzz_settings() -> settings:
    """The hypothesis settings of this run (see the module docstring)."""
    name = os.environ.get("RELIABILITY_PROFILE", "default")
    if name not in PROFILES:
        raise pytest.UsageError(f"RELIABILITY_PROFILE={name!r}: use one of {', '.join(PROFILES)}")
    return PROFILES[name]


@pytest.fixture()
def record_figure(request: pytest.FixtureRequest):
    """record_figure(name, tried, failures, must_pass=True): see the module docstring."""

    def _record(name: str, tried: int, failures: int | list[str] | tuple[str, ...], must_pass: bool = True) -> Figure:
        examples = tuple(str(item)[:300] for item in failures) if isinstance(failures, (list, tuple)) else ()
        failed = len(failures) if isinstance(failures, (list, tuple)) else int(failures)
        figure = Figure(request.node.nodeid, name, int(tried), failed, examples)
        FIGURES.append(figure)
        print(f"FIGURE {figure.line()}")
        if must_pass:
            assert tried > 0, f"{name}: nothing was tried"
            assert failed == 0, figure.line()
        return figure

    return _record


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Figures printed as `FIGURE ...` lines by tests that do not use the fixture."""
    if report.when != "call" or HERE not in Path(report.fspath).resolve().parents:
        return
    known = {(figure.test, figure.name) for figure in FIGURES}
    for match in FIGURE_LINE.finditer(report.capstdout):
        name = match.group("name")
        if (report.nodeid, name) not in known:
            FIGURES.append(Figure(report.nodeid, name, int(match.group("tried").replace(",", "")),
                                  int(match.group("failed").replace(",", ""))))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not FIGURES:
        return
    terminalreporter.section("reliability figures (tried / failed)")
    width = max(len(figure.name) for figure in FIGURES)
    terminalreporter.write_line(f"{'figure'.ljust(width)}  {'tried':>9}  {'failed':>7}")
    for figure in FIGURES:
        terminalreporter.write_line(f"{figure.name.ljust(width)}  {figure.tried:>9,}  {figure.failed:>7,}")
        for example in figure.examples[:SHOWN_FAILURES]:
            terminalreporter.write_line(f"{'':{width}}    e.g. {example}")
    total_tried, total_failed = sum(f.tried for f in FIGURES), sum(f.failed for f in FIGURES)
    terminalreporter.write_line(f"{'total'.ljust(width)}  {total_tried:>9,}  {total_failed:>7,}")

"""Runs eval cases through memory backends, step by step, and scores their checks.

Only the shared `MemoryBackend` interface and the registry are used, so a score means the
same thing for every backend. Each (case, backend) pair gets fresh users, named with a
per-run id, so cases never see each other's memories; the runtime has a private clock,
reset per case, so `advance_days` never leaks into another case or into the lab.
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Callable, Iterable

from backends.base import Knobs, MemoryBackend, TurnContext, TurnResult
from backends.registry import backend_names, build_backend
from backends.query_vector import with_query_vector
from runtime import Runtime
from clock import Clock
from evals.background import finish_jobs
from evals.checks import state_checks, turn_checks
from evals.footprint import user_rows_texts
from evals.schema import Case, Step
from evals.scores import CaseResult
from scratch import scratch_runtime
from settings import Settings

Progress = Callable[[str], None]
MAX_USER_ID = 64


class BackendUnavailable(ValueError):
    """A backend asked for by name that this checkout cannot run."""


def check_backends(names: Iterable[str]) -> list[str]:
    """The names, validated against the registry; an unknown one is a clear error."""
    available = backend_names()
    names = list(names) or available
    missing = [name for name in names if name not in available]
    if missing:
        raise BackendUnavailable(
            f"backend {', '.join(map(repr, missing))} is not available in this checkout "
            f"(available: {', '.join(available) or 'none'})"
        )
    return names


def eval_runtime(settings: Settings | None = None) -> Runtime:
    """The evals' runtime: scratch storage (never the lab's database, see scratch.py) and a
    clock of its own, so the eval's users and time travel never reach the lab."""
    return scratch_runtime(settings, clock=Clock())


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class CaseRun:
    """One case on one backend: maps the case's user names to fresh ids and runs the steps."""

    def __init__(self, runtime: Runtime, backend: MemoryBackend, knobs: Knobs, case: Case, prefix: str) -> None:
        self.runtime, self.backend, self.knobs, self.case = runtime, backend, knobs, case
        self.users = {name: _user_id(prefix, name) for name in case.users()}

    def run(self) -> CaseResult:
        self.runtime.clock.reset()
        for user_id in self.users.values():
            self.runtime.store.ensure_user(user_id)
        outcomes: list[str | None] = []
        for number, step in enumerate(self.case.steps, start=1):
            try:
                outcomes += [_label(number, step, failure) for failure in self._step(step)]
            except Exception as error:  # noqa: BLE001 - a crashing backend fails its checks, the run goes on
                outcomes += self._not_checked(number, step, error)
                break
        failures = [failure for failure in outcomes if failure is not None]
        checks = self.case.check_count()
        return CaseResult(id=self.case.id, backend=self.backend.name, category=self.case.category,
                          passed=checks - len(failures), checks=checks, failures=failures)

    def _step(self, step: Step) -> list[str | None]:
        turn = self._act(step)
        if step.expect is None:
            return []
        results = turn_checks(step.expect, turn) if turn is not None else []
        return results + state_checks(step.expect, self._stored, self._everywhere)

    def _act(self, step: Step) -> TurnResult | None:
        """Do the step's action; a `say` returns its turn once its background jobs are done."""
        if step.say is not None:
            user_id = self.users[step.say.user]
            context = with_query_vector(TurnContext(user_id=user_id, text=step.say.text, knobs=self.knobs), self.runtime.embedder)
            turn = self.backend.turn(context)
            finish_jobs(self.runtime, user_id, turn.jobs)
            return turn
        if step.new_conversation is not None:
            self.backend.new_conversation(self.users[step.new_conversation.user])
        elif step.advance_days is not None:
            self.runtime.clock.advance(days=step.advance_days)
        elif step.sweep:
            self.backend.sweep()
            for user_id in self.users.values():  # only this case's users: never run the lab's jobs here
                finish_jobs(self.runtime, user_id, [])
        elif step.forget is not None:
            self.backend.forget(self.users[step.forget.user], step.forget.topic)
        elif step.erase is not None:
            self.backend.erase_user(self.users[step.erase.user])
        return None

    def _stored(self, name: str) -> list[str]:
        return self.backend.stored_texts(self.users[name])

    def _everywhere(self) -> Iterable[tuple[str, str]]:
        """Every text about every user of the case: the backend's stores, then every table."""
        for user_id in self.users.values():
            yield from ((f"{self.backend.name} store", text) for text in self.backend.all_texts(user_id))
            yield from user_rows_texts(self.runtime.engine, user_id)

    def _not_checked(self, number: int, step: Step, error: Exception) -> list[str | None]:
        """A step raised: its checks and every later one fail, naming the error."""
        reason = f"not checked: step {number} ({step.action}) raised {type(error).__name__}: {error}"
        remaining = [(n, s) for n, s in enumerate(self.case.steps, start=1) if n >= number and s.expect]
        return [_label(n, s, reason) for n, s in remaining for _ in range(s.expect.check_count())]


def _label(number: int, step: Step, failure: str | None) -> str | None:
    return None if failure is None else f"step {number} ({step.action}): {failure}"


def _user_id(prefix: str, name: str) -> str:
    slug = re.sub(r"[^a-z0-9_.-]+", "-", name.lower()).strip("-") or "user"
    return f"{prefix}-{slug}"[:MAX_USER_ID]


class EvalRunner:
    """Cases x backends on one runtime; results in case order, then backend order."""

    def __init__(self, runtime: Runtime, knobs: Knobs | None = None, progress: Progress | None = None) -> None:
        self.runtime = runtime
        self.knobs = knobs or Knobs.from_settings(runtime.settings)
        self.progress = progress or (lambda message: None)
        self.run_id = uuid.uuid4().hex[:8]
        self._backends: dict[str, MemoryBackend] = {}

    def backend(self, name: str) -> MemoryBackend:
        if name not in self._backends:
            self._backends[name] = build_backend(name, self.runtime)
        return self._backends[name]

    def run(self, cases: list[Case], backends: Iterable[str]) -> list[CaseResult]:
        names = check_backends(backends)
        results: list[CaseResult] = []
        total = len(cases) * len(names)
        for index, case in enumerate(cases):
            for name in names:
                prefix = f"ev{self.run_id}-{index:03d}-{name.replace('_', '')}"
                result = CaseRun(self.runtime, self.backend(name), self.knobs, case, prefix).run()
                results.append(result)
                self.progress(f"[{len(results)}/{total}] {name:<11} {case.id}: {result.passed}/{result.checks}"
                              + (f"  ({result.failures[0]})" if result.failures else ""))
        return results

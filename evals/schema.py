"""The eval case format, as pydantic models, and the loader of case files.

The format is a contract (issue 7): other teams write case files against it, so unknown
keys are errors rather than silently ignored (a typo such as `injected_anny` would
otherwise turn a check into no check), regexes are compiled at load time, and every
error names the file, the case id and the key, so a person can fix it in one edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

Category = Literal[
    "extraction_precision", "update", "over_retrieval", "answer_use", "cross_user", "forgetting", "poisoning"
]
CATEGORIES: tuple[str, ...] = Category.__args__  # type: ignore[attr-defined]
ACTIONS = ("say", "new_conversation", "advance_days", "sweep", "forget", "erase")
TURN_ONLY_KEYS = ("injected_any", "injected_none", "nothing_injected", "reply_matches", "reply_avoids")
"""Expectations about a model turn: they only make sense on a `say` step."""


class CaseFileError(ValueError):
    """A malformed case file; the message names the file, the case and the key."""


def _compile(pattern: str) -> str:
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as error:
        raise ValueError(f"invalid regex {pattern!r}: {error}") from None
    return pattern


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UserRef(_Strict):
    user: str = Field(min_length=1)


class Say(UserRef):
    text: str = Field(min_length=1)


class Forget(UserRef):
    topic: str = Field(min_length=1)


class StoredCheck(_Strict):
    """Live memories of `user` matching `match`: exactly `count`, or within `min`/`max`."""

    user: str = Field(min_length=1)
    match: str
    count: int | None = Field(None, ge=0)
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)

    @field_validator("match")
    @classmethod
    def _regex(cls, pattern: str) -> str:
        return _compile(pattern)

    @model_validator(mode="after")
    def _one_bound(self) -> "StoredCheck":
        if self.count is None and self.min is None and self.max is None:
            raise ValueError("needs count, or min and/or max")
        if self.count is not None and (self.min is not None or self.max is not None):
            raise ValueError("takes count or min/max, not both")
        return self

    def accepts(self, found: int) -> bool:
        if self.count is not None:
            return found == self.count
        return (self.min is None or found >= self.min) and (self.max is None or found <= self.max)

    def bound_text(self) -> str:
        if self.count is not None:
            return f"count {self.count}"
        parts = [f"min {self.min}" if self.min is not None else "", f"max {self.max}" if self.max is not None else ""]
        return " ".join(part for part in parts if part)


class Expect(_Strict):
    injected_any: list[str] = Field(default_factory=list)
    injected_none: list[str] = Field(default_factory=list)
    nothing_injected: bool | None = None
    stored: list[StoredCheck] = Field(default_factory=list)
    reply_matches: list[str] = Field(default_factory=list)
    reply_avoids: list[str] = Field(default_factory=list)
    absent_everywhere: str | None = None

    @field_validator("injected_any", "injected_none", "reply_matches", "reply_avoids")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        return [_compile(pattern) for pattern in patterns]

    @field_validator("absent_everywhere")
    @classmethod
    def _regex(cls, pattern: str | None) -> str | None:
        return None if pattern is None else _compile(pattern)

    def check_count(self) -> int:
        """Each listed regex or stored entry is one check; the two scalar keys one each."""
        scalars = (self.nothing_injected is not None) + (self.absent_everywhere is not None)
        lists = self.injected_any + self.injected_none + self.reply_matches + self.reply_avoids
        return len(lists) + len(self.stored) + scalars

    def has_turn_checks(self) -> bool:
        return bool(self.injected_any or self.injected_none or self.reply_matches or self.reply_avoids) or (
            self.nothing_injected is not None
        )


class Step(_Strict):
    """Exactly one action, optionally with expectations checked after it."""

    say: Say | None = None
    new_conversation: UserRef | None = None
    advance_days: float | None = Field(None, ge=0)
    sweep: Literal[True] | None = None
    forget: Forget | None = None
    erase: UserRef | None = None
    expect: Expect | None = None

    @model_validator(mode="after")
    def _one_action(self) -> "Step":
        present = [name for name in ACTIONS if getattr(self, name) is not None]
        if len(present) != 1:
            raise ValueError(f"a step needs exactly one of {', '.join(ACTIONS)} (got {', '.join(present) or 'none'})")
        if self.expect is not None and self.action != "say" and self.expect.has_turn_checks():
            raise ValueError(f"{', '.join(TURN_ONLY_KEYS)} are only allowed on a say step")
        return self

    @property
    def action(self) -> str:
        return next(name for name in ACTIONS if getattr(self, name) is not None)

    def users(self) -> set[str]:
        users = {ref.user for ref in (self.say, self.new_conversation, self.forget, self.erase) if ref is not None}
        return users | {check.user for check in (self.expect.stored if self.expect else [])}


class Case(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    category: Category
    description: str = ""
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _has_checks(self) -> "Case":
        if self.check_count() == 0:
            raise ValueError("the case checks nothing: add an expect to at least one step")
        return self

    def check_count(self) -> int:
        return sum(step.expect.check_count() for step in self.steps if step.expect is not None)

    def users(self) -> list[str]:
        return sorted(set().union(*(step.users() for step in self.steps)))


def _where(error: dict[str, Any]) -> str:
    return ".".join(str(part) for part in error["loc"]) or "(case)"


def _case_error(path: Path, index: int, raw: Any, error: ValidationError) -> CaseFileError:
    case_id = raw.get("id") if isinstance(raw, dict) else None
    label = f"case {case_id!r}" if case_id else f"case #{index + 1} (no id)"
    first = error.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    more = f" (and {len(error.errors()) - 1} more)" if len(error.errors()) > 1 else ""
    return CaseFileError(f"{path}: {label}: key {_where(first)}: {message}{more}")


def load_case_file(path: Path) -> list[Case]:
    """Parse one YAML file (a list of cases); raise CaseFileError naming file, case and key."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise CaseFileError(f"{path}: cannot read YAML: {error}") from None
    if not isinstance(data, list):
        raise CaseFileError(f"{path}: expected a list of cases at the top level, got {type(data).__name__}")
    cases = []
    for index, raw in enumerate(data):
        try:
            cases.append(Case.model_validate(raw))
        except ValidationError as error:
            raise _case_error(path, index, raw, error) from None
    return cases


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, folders expanded to their *.yaml / *.yml files (sorted, recursive)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml")))
        elif path.is_file():
            files.append(path)
        else:
            raise CaseFileError(f"{path}: no such file or folder")
    return files


def load_cases(paths: Iterable[str | Path]) -> list[Case]:
    """Every case of the given files/folders; case ids must be unique across them."""
    cases: list[Case] = []
    seen: dict[str, Path] = {}
    for path in case_files(paths):
        for case in load_case_file(path):
            if case.id in seen:
                raise CaseFileError(f"{path}: case {case.id!r}: key id: duplicate of a case in {seen[case.id]}")
            seen[case.id] = path
            cases.append(case)
    return cases


DEFAULT_CASES_DIR = Path(__file__).resolve().parent / "cases"

"""The labelled recall set format: user profiles, their memories, and messages that say
which memories a thoughtful assistant needs to answer them.

`[{id, memories: [{id, kind: semantic|episodic, days_ago?, text}], queries: [{text, relevant: [memory ids]}]}]`
A message with `relevant: []` needs no memory: injecting anything for it is a false positive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, model_validator

from settings import REPO_ROOT

DEFAULT_SET = REPO_ROOT.parent / "shared" / "data" / "recall" / "dev.yaml"


class RecallSetError(Exception):
    """A set file that cannot be read or does not follow the format, in one line."""


class LabelledMemory(BaseModel):
    id: str
    kind: Literal["semantic", "episodic", "procedural"] = "semantic"
    days_ago: float | None = Field(None, ge=0)
    text: str = Field(min_length=1)


class LabelledMessage(BaseModel):
    text: str = Field(min_length=1)
    relevant: list[str] = Field(default_factory=list)


class Profile(BaseModel):
    id: str
    memories: list[LabelledMemory]
    queries: list[LabelledMessage]

    @model_validator(mode="after")
    def _relevant_ids_exist(self) -> "Profile":
        known = {memory.id for memory in self.memories}
        if len(known) != len(self.memories):
            raise ValueError(f"profile {self.id!r} repeats a memory id")
        for query in self.queries:
            unknown = set(query.relevant) - known
            if unknown:
                raise ValueError(f"profile {self.id!r}: {query.text[:40]!r} names unknown memories {sorted(unknown)}")
        return self


_PROFILES = TypeAdapter(list[Profile])


def load_set(path: Path) -> list[Profile]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        return _PROFILES.validate_python(data)
    except OSError as error:
        raise RecallSetError(f"{path}: cannot read it ({error.strerror or error})") from error
    except yaml.YAMLError as error:
        raise RecallSetError(f"{path}: not valid YAML ({str(error).splitlines()[0]})") from error
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RecallSetError(f"{path}: {where}: {first['msg']}") from error


def load_sets(paths: list[Path]) -> list[Profile]:
    """Every profile of every file; ids are prefixed by the file name when several are given."""
    if len(paths) == 1:
        return load_set(paths[0])
    return [profile.model_copy(update={"id": f"{Path(path).stem}/{profile.id}"}) for path in paths for profile in load_set(path)]

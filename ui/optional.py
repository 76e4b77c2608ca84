"""Guarded imports of parts of the lab that other people are still building.

The lab must stay runnable while the job queue, the evals or an erasure helper are not
there yet: a page asks for `optional_attr("jobs.queue", "counts_by_state")` and shows
"not available yet" on None. Only a missing *target* module counts as absent; a target
that exists but fails to import (a broken dependency) raises, so bugs are not hidden.
"""

from __future__ import annotations

import importlib
from typing import Any


def _is_target(missing: str | None, module: str) -> bool:
    """True when the missing module is the target itself or one of its parent packages."""
    return missing is not None and (module == missing or module.startswith(missing + "."))


def optional_module(module: str) -> Any | None:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if _is_target(error.name, module):
            return None
        raise


def optional_attr(module: str, attr: str) -> Any | None:
    """`module.attr`, or None while either does not exist yet."""
    found = optional_module(module)
    return None if found is None else getattr(found, attr, None)

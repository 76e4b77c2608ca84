"""Path safety for the memory tool: one function that turns what the model sent into the
one canonical path under /memories, or refuses it with a message the model can act on.

Why refuse instead of normalise: the store is a table keyed by (user_id, path), so an
escape cannot reach the disk, but a path that only *resolves* inside /memories (`a/../b`,
`%2e%2e`, fullwidth dots, a trailing NUL) would give one file several names, and a model
that learns such spellings are accepted would carry them to a filesystem-backed tool. So
exactly one spelling per file is accepted and everything ambiguous is refused.
"""

from __future__ import annotations

import re
import unicodedata

from anthropic.lib.tools import ToolError

MEMORY_ROOT = "/memories"
MAX_PATH_CHARS = 256
MAX_SEGMENT_CHARS = 100
MAX_DEPTH = 8
"""Segments below /memories; the listing shows two levels, deeper trees only hide files."""

_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Control, format (zero-width, bidi overrides), surrogate, private-use, unassigned, line/paragraph separators."""


def _refuse(path: object, reason: str) -> ToolError:
    shown = repr(path) if not isinstance(path, str) else repr(path[:120])
    return ToolError(f"Invalid path {shown}: {reason}. Use a plain path under {MEMORY_ROOT}, e.g. {MEMORY_ROOT}/notes.md.")


def _check_characters(path: str) -> None:
    if "\\" in path:
        raise _refuse(path, "backslashes are not allowed (use '/' between folders)")
    if "%" in path:
        reason = "URL-encoded characters are not decoded" if _PERCENT_ESCAPE.search(path) else "'%' is not allowed"
        raise _refuse(path, reason)
    for char in path:
        if unicodedata.category(char) in _BAD_CATEGORIES:
            raise _refuse(path, f"control or invisible character U+{ord(char):04X} is not allowed")
    if unicodedata.normalize("NFKC", path) != path:
        raise _refuse(path, "use plain characters (this path contains look-alike or compatibility characters)")


def _check_segment(path: str, segment: str) -> None:
    if segment == "":
        raise _refuse(path, "empty path segment ('//')")
    if segment.strip(".") == "":
        raise _refuse(path, f"'{segment}' segments are not allowed; write the full path from {MEMORY_ROOT}")
    if segment != segment.strip():
        raise _refuse(path, "a file or folder name may not start or end with whitespace")
    if len(segment) > MAX_SEGMENT_CHARS:
        raise _refuse(path, f"a file or folder name is longer than {MAX_SEGMENT_CHARS} characters")


def canonical_path(path: object) -> str:
    """The canonical form of a memory path (`/memories` or `/memories/a/b.md`), or a ToolError."""
    if not isinstance(path, str) or not path:
        raise _refuse(path, "a non-empty string path is required")
    if len(path) > MAX_PATH_CHARS:
        raise _refuse(path, f"paths are limited to {MAX_PATH_CHARS} characters")
    _check_characters(path)
    if path != MEMORY_ROOT and not path.startswith(MEMORY_ROOT + "/"):
        raise _refuse(path, f"only paths inside {MEMORY_ROOT} are allowed")
    # One trailing slash names the same directory ("/memories/" is the root).
    body = path[len(MEMORY_ROOT):]
    if body.endswith("/"):
        body = body[:-1]
    if not body:
        return MEMORY_ROOT
    segments = body[1:].split("/")
    if len(segments) > MAX_DEPTH:
        raise _refuse(path, f"paths may be at most {MAX_DEPTH} folders deep")
    for segment in segments:
        _check_segment(path, segment)
    return MEMORY_ROOT + "/" + "/".join(segments)


def parent_dirs(path: str) -> list[str]:
    """The directories above a canonical path, nearest first, excluding /memories."""
    parts = path.split("/")[2:-1]
    return ["/".join([MEMORY_ROOT, *parts[: i + 1]]) for i in range(len(parts) - 1, -1, -1)]

"""canonical_path: one spelling per file, everything ambiguous refused with a usable message."""

from __future__ import annotations

import pytest
from anthropic.lib.tools import ToolError

from backends.memory_tool.paths import canonical_path, parent_dirs


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/memories", "/memories"),
        ("/memories/", "/memories"),
        ("/memories/profile.md", "/memories/profile.md"),
        ("/memories/projects/", "/memories/projects"),
        ("/memories/projects/quick grep.md", "/memories/projects/quick grep.md"),
        ("/memories/café.md", "/memories/café.md"),
        ("/memories/.hidden", "/memories/.hidden"),
    ],
)
def test_accepted_paths_are_canonical(raw: str, expected: str) -> None:
    assert canonical_path(raw) == expected


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("/memories/../../etc/passwd", "'..' segments are not allowed"),
        ("/memories/%2e%2e/secret", "URL-encoded"),
        ("/memories/%252e%252e/secret", "URL-encoded"),
        ("/memories\\..\\etc", "backslashes"),
        ("/memories/a\x00.md", "U+0000"),
        ("/etc/passwd", "only paths inside /memories"),
        ("/memories//a.md", "empty path segment"),
        ("/memories/" + "x" * 101, "longer than 100"),
        ("/memories/" + "a/" * 130 + "b", "limited to 256"),
        ("/memories/\uff0e\uff0e/x", "look-alike"),
        ("/memories/a\u200bb", "U+200B"),
    ],
)
def test_refusals_say_why(raw: str, fragment: str) -> None:
    with pytest.raises(ToolError) as caught:
        canonical_path(raw)
    message = str(caught.value)
    assert fragment in message
    assert "/memories/notes.md" in message  # the model is told what a valid path looks like


def test_parent_dirs_nearest_first() -> None:
    assert parent_dirs("/memories/a/b/c.md") == ["/memories/a/b", "/memories/a"]
    assert parent_dirs("/memories/c.md") == []

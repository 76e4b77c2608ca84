"""Hostile paths, through every command: refused with a tool error, nothing created, and
no other user's file touched (compared byte for byte, timestamps included)."""

from __future__ import annotations

import uuid

import pytest
from anthropic.lib.tools import ToolError

from backends.memory_tool.store import MemoryFileStore
from tests.memory_tool.helpers import snapshot

HOSTILE_PATHS = [
    "/memories/../../etc/passwd",
    "/memories/../secret.md",
    "/memories/a/../../b.md",
    "/memories/a/../b.md",
    "/memories/./x.md",
    "/memories/...",
    "/etc/passwd",
    "../memories/x.md",
    "memories/x.md",
    "~/memories/x.md",
    "//memories/x.md",
    " /memories/x.md",
    "/memories/x.md ",
    "/memoriesx/a.md",
    "/memories_evil/a.md",
    "/Memories/a.md",
    "file:///memories/x.md",
    "/tmp/../memories/x.md",
    "/memories/%2e%2e/%2e%2e/etc/passwd",
    "/memories/%2E%2E%2Fsecret",
    "/memories/..%2fetc%2fpasswd",
    "/memories/%252e%252e/etc/passwd",
    "/memories/%25252e%25252e/x",
    "/memories/%00",
    "/memories\\..\\..\\etc\\passwd",
    "/memories/notes\\x.md",
    "/memories/..\\/x",
    "/memories/notes.md\x00.txt",
    "/memories/\x00",
    "/memories/a\nb.md",
    "/memories/a\rb",
    "/memories/a\tb",
    "/memories/\x7f",
    "/memories/a\u202eb.md",
    "/memories/a\u200bb.md",
    "/memories/\u2025/x.md",
    "/memories/\uff0e\uff0e/etc/passwd",
    "/memories//x.md",
    "/memories/a/ /b.md",
    "/memories/" + "a" * 300,
    "/memories/" + "b" * 101 + ".md",
    "/memories/" + "/".join(["d"] * 9) + "/f.md",
    "",
    "/",
]

SAFE = "/memories/mine.md"


def commands_for(path: str) -> list[dict]:
    """Every command with the hostile path in each path slot it has."""
    return [
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": "- pwned"},
        {"command": "str_replace", "path": path, "old_str": "root", "new_str": "pwned"},
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "- pwned"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/moved.md"},
        {"command": "rename", "old_path": SAFE, "new_path": path},
    ]


@pytest.fixture(scope="module")
def victim_and_attacker(runtime):
    victim = runtime.store.ensure_user(f"victim-{uuid.uuid4().hex[:10]}")
    attacker = runtime.store.ensure_user(f"attacker-{uuid.uuid4().hex[:10]}")
    victim_store = MemoryFileStore(runtime.engine, victim, runtime.clock)
    for path in ("/memories/secret.md", "/memories/etc/passwd", "/memories/mine.md", "/memories/moved.md"):
        victim_store.create(path, f"- victim data in {path}\n- root\n")
    MemoryFileStore(runtime.engine, attacker, runtime.clock).create(SAFE, "- attacker's own note\n- root\n")
    return victim, attacker


def test_at_least_thirty_hostile_paths() -> None:
    assert len(set(HOSTILE_PATHS)) == len(HOSTILE_PATHS) >= 30


def test_the_classic_traversal_is_refused(runtime, victim_and_attacker, make_tool) -> None:
    _, attacker = victim_and_attacker
    tool = make_tool(attacker)
    with pytest.raises(ToolError, match="not allowed"):
        tool.call({"command": "view", "path": "/memories/../../etc/passwd"})
    assert tool.read_texts == [] and tool.calls[0].is_error


@pytest.mark.parametrize("path", HOSTILE_PATHS, ids=[repr(p)[:40] for p in HOSTILE_PATHS])
def test_hostile_path_refused_by_every_command(runtime, victim_and_attacker, make_tool, path: str) -> None:
    victim, attacker = victim_and_attacker
    victim_before, attacker_before = snapshot(runtime.engine, victim), snapshot(runtime.engine, attacker)
    tool = make_tool(attacker)
    for command in commands_for(path):
        with pytest.raises(ToolError) as refused:
            tool.call(command)
        assert str(refused.value).startswith("Invalid path")  # refused by the path check, not by chance
    assert [call.is_error for call in tool.calls] == [True] * 7
    assert tool.read_texts == []
    assert snapshot(runtime.engine, victim) == victim_before
    assert snapshot(runtime.engine, attacker) == attacker_before

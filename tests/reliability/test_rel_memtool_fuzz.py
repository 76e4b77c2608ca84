"""Property-based fuzzing of the memory tool's six commands (hypothesis): hostile and random
paths, random contents (NUL bytes, lone surrogates, secrets, huge texts), wrong types, in
sequences of up to five commands. Whatever the model sends:

- a call returns the tool's text or raises the tool's own `ToolError`, nothing else;
- no other user's row changes (compared byte for byte, timestamps included);
- every file the caller owns sits at its one canonical path under /memories, holds no NUL
  byte and no secret, and the caller stays within the files-per-user cap.

A few hundred examples by default; `RELIABILITY_PROFILE=long` runs 10,000 (see conftest.py).
"""

from __future__ import annotations

import uuid

import pytest

from anthropic.lib.tools import ToolError
from hypothesis import given, strategies as st

from backends.memory_tool.paths import MEMORY_ROOT, canonical_path
from backends.memory_tool.store import MemoryFileStore
from backends.memory_tool.tool import PostgresMemoryTool
from core.secrets import secret_reason
from tests.memory_tool.helpers import snapshot

MAX_FILES = 12
VICTIM_PATHS = ("/memories/notes.md", "/memories/profile.md", "/memories/a/b.md", "/memories/work/plan.md")

SAFE_SEGMENTS = st.sampled_from(["notes.md", "profile.md", "a", "b.md", "work", "plan.md", "x", "café.md", "日記.md"])
VALID_PATHS = st.builds(lambda parts: MEMORY_ROOT + "/" + "/".join(parts), st.lists(SAFE_SEGMENTS, min_size=1, max_size=3))
SEGMENTS = st.one_of(
    SAFE_SEGMENTS,
    st.sampled_from(["..", ".", "...", "", " ", "x ", " x", "%2e%2e", "%2f", "%00", "%252e", "\x00", "\\", "..\\",
                     "\uff0e\uff0e", "\u2025", "a\u200bb", "a\u202eb", "\ud800", "\udcff", "~", "$HOME", "*", "?",
                     "CON", "a/..", "\n", "\t", "\x7f", "\u3000"]),
    st.text(min_size=0, max_size=12),
    st.text(st.characters(exclude_categories=()), min_size=1, max_size=6),
)
PREFIXES = st.sampled_from([MEMORY_ROOT, MEMORY_ROOT + "/", "/memories/..", "//memories", "memories", "/Memories",
                            "/memoriesx", "/etc", "", "/", "file://" + MEMORY_ROOT, "\\memories", MEMORY_ROOT + "/.",
                            "/tmp/../memories", "~" + MEMORY_ROOT])
HOSTILE_PATHS = st.one_of(
    st.builds(lambda prefix, parts: prefix + "/" + "/".join(parts) if parts else prefix,
              PREFIXES, st.lists(SEGMENTS, max_size=10)),
    st.sampled_from(VICTIM_PATHS),
    st.text(max_size=40),
    st.text(min_size=250, max_size=300),
)
PATHS = st.one_of(VALID_PATHS, VALID_PATHS, HOSTILE_PATHS)
NOT_A_STRING = st.one_of(st.none(), st.integers(), st.booleans(), st.lists(st.text(max_size=3), max_size=2),
                         st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2))
SECRETS = st.sampled_from(["my PIN is 4921", "door code: 8812", "password hunter2", "card 4111 1111 1111 1111",
                           "sk-ant-api03-abcdefghijklmnop", "AKIAABCDEFGHIJKLMNOP", "GB82 WEST 1234 5698 7654 32"])
PLAIN = st.text(st.characters(categories=("L", "N", "Zs", "Po")), max_size=80)
HOSTILE_TEXT = st.one_of(
    st.text(max_size=200),
    st.text(st.characters(exclude_categories=()), max_size=60),
    st.builds(lambda a, s, b: f"{a} {s} {b}", PLAIN, SECRETS, PLAIN),
    st.sampled_from(["", "\x00", "a\x00b", "\ud83d", "\udcff", "x" * 25_000]),
)
CONTENTS = st.one_of(PLAIN, st.builds(lambda lines: "\n".join(f"- {line}" for line in lines), st.lists(PLAIN, max_size=4)),
                     HOSTILE_TEXT)
LINES = st.one_of(st.integers(min_value=-2, max_value=6), st.integers())
RANGES = st.one_of(st.lists(st.integers(min_value=-5, max_value=10), min_size=2, max_size=2),
                   st.lists(st.integers(), max_size=3))

WELL_FORMED = [
    st.fixed_dictionaries({"command": st.just("view"), "path": PATHS}, optional={"view_range": RANGES}),
    st.fixed_dictionaries({"command": st.just("create"), "path": PATHS, "file_text": CONTENTS}),
    st.fixed_dictionaries({"command": st.just("str_replace"), "path": PATHS,
                           "old_str": st.one_of(st.sampled_from(["- tea", "tea", "own note"]), CONTENTS),
                           "new_str": CONTENTS}),
    st.fixed_dictionaries({"command": st.just("insert"), "path": PATHS, "insert_line": LINES, "insert_text": CONTENTS}),
    st.fixed_dictionaries({"command": st.just("delete"), "path": PATHS}),
    st.fixed_dictionaries({"command": st.just("rename"), "old_path": PATHS, "new_path": PATHS}),
]
MALFORMED = st.one_of(
    st.fixed_dictionaries({"command": st.sampled_from(["view", "create", "str_replace", "insert", "delete", "rename"]),
                           "path": st.one_of(PATHS, NOT_A_STRING)},
                          optional={"file_text": NOT_A_STRING, "old_str": NOT_A_STRING, "new_str": NOT_A_STRING,
                                    "insert_line": NOT_A_STRING, "insert_text": NOT_A_STRING,
                                    "view_range": NOT_A_STRING, "old_path": NOT_A_STRING, "new_path": NOT_A_STRING}),
    st.fixed_dictionaries({"command": st.one_of(st.sampled_from(["undo", "", "VIEW", "memory"]), NOT_A_STRING),
                           "path": PATHS}),
    st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
)
COMMANDS = st.one_of(*WELL_FORMED, *WELL_FORMED, *WELL_FORMED, MALFORMED)


def _check_own_files(store: MemoryFileStore) -> None:
    files = store.files()
    assert len(files) <= MAX_FILES, f"{len(files)} files, over the cap of {MAX_FILES}"
    for file in files:
        assert file.path.startswith(MEMORY_ROOT + "/") and canonical_path(file.path) == file.path, file.path
        assert "\x00" not in file.content, f"NUL stored in {file.path}"
        assert secret_reason(file.content) is None, f"a secret stored in {file.path}: {file.content[:80]!r}"


def test_the_six_commands_never_escape_or_touch_another_user(runtime, make_user, fuzz_settings, record_figure) -> None:
    victim = make_user("fuzz-victim")
    victim_store = MemoryFileStore(runtime.engine, victim, runtime.clock)
    for path in VICTIM_PATHS:
        victim_store.create(path, f"- the victim's note in {path}\n- tea\n")
    before = snapshot(runtime.engine, victim)
    attacker = make_user("fuzz-attacker")
    store = MemoryFileStore(runtime.engine, attacker, runtime.clock, max_files=MAX_FILES)
    counts = {"examples": 0, "calls": 0, "refused": 0, "done": 0}

    @fuzz_settings
    @given(st.lists(COMMANDS, min_size=1, max_size=8))
    def run(commands: list[dict]) -> None:
        counts["examples"] += 1
        store.delete_all()  # each example starts from the same directory, so a failure replays
        store.create("/memories/notes.md", "- tea\n- the attacker's own note\n")
        tool = PostgresMemoryTool(store)
        for command in commands:
            counts["calls"] += 1
            try:
                assert isinstance(tool.call(command), str)
                counts["done"] += 1
            except ToolError:
                counts["refused"] += 1
        assert snapshot(runtime.engine, victim) == before, "another user's files changed"
        _check_own_files(store)

    failures: list[str] = []
    try:
        run()
    except Exception as error:  # noqa: BLE001 - hypothesis has shrunk it; the figure shows it
        failures.append(f"{type(error).__name__}: {str(error)[:300]}")
    record_figure(f"memory-tool fuzz: {counts['examples']:,} examples, calls tried "
                  f"({counts['done']:,} done, {counts['refused']:,} refused with ToolError)", counts["calls"], failures)
    assert counts["examples"] >= min(fuzz_settings.max_examples, 100)


def test_a_user_id_in_the_path_is_just_a_name(runtime, make_user) -> None:
    """Naming another user in a path reaches a file of the caller's own, never theirs."""
    victim, attacker = make_user("named-victim"), make_user("named-attacker")
    MemoryFileStore(runtime.engine, victim, runtime.clock).create("/memories/notes.md", "- victim\n")
    before = snapshot(runtime.engine, victim)
    tool = PostgresMemoryTool(MemoryFileStore(runtime.engine, attacker, runtime.clock))
    for path in (f"/memories/{victim}/notes.md", f"/memories/../{victim}/notes.md", f"/{victim}/memories/notes.md",
                 f"/memories/{uuid.uuid4()}"):
        try:
            tool.call({"command": "create", "path": path, "file_text": "- mine"})
        except ToolError:
            pass
    assert snapshot(runtime.engine, victim) == before


def test_the_root_is_never_a_file(runtime, make_user) -> None:
    """Found by the fuzzer: `create /memories/` made a file named /memories (the directory
    itself)."""
    store = MemoryFileStore(runtime.engine, make_user("root-file"), runtime.clock)
    tool = PostgresMemoryTool(store)
    for path in (MEMORY_ROOT, MEMORY_ROOT + "/"):
        with pytest.raises(ToolError, match="directory itself"):
            tool.call({"command": "create", "path": path, "file_text": ""})
    assert store.files() == []

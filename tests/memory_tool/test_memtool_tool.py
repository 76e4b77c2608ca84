"""The six memory commands over the real embedded Postgres, in the SDK's result formats."""

from __future__ import annotations

import pytest
from anthropic.lib.tools import ToolError
from sqlalchemy import select
from sqlmodel import Session

from backends.memory_tool.store import MAX_FILE_CHARS, MAX_FILES_PER_USER
from db.models import MemoryFile
from tests.memory_tool.helpers import snapshot


def test_create_view_and_last_read_at(runtime, user_id, make_tool) -> None:
    tool = make_tool(user_id)
    assert tool.call({"command": "create", "path": "/memories/profile.md", "file_text": "# Profile\n- Likes tea\n"}) \
        == "File created successfully at: /memories/profile.md"
    [row] = snapshot(runtime.engine, user_id)
    assert row[5] is None  # never read yet
    shown = tool.call({"command": "view", "path": "/memories/profile.md"})
    assert shown == "Here's the content of /memories/profile.md with line numbers:\n" \
                    "     1\t# Profile\n     2\t- Likes tea\n     3\t"
    assert snapshot(runtime.engine, user_id)[0][5] is not None  # view stamps last_read_at
    assert tool.read_texts == ["# Profile\n- Likes tea\n"]
    assert [(c.command, c.path, c.is_error) for c in tool.calls] == [
        ("create", "/memories/profile.md", False), ("view", "/memories/profile.md", False)]


def test_view_range(user_id, make_tool) -> None:
    tool = make_tool(user_id)
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "one\ntwo\nthree\nfour"})
    assert tool.call({"command": "view", "path": "/memories/a.md", "view_range": [2, 3]}).endswith(
        "     2\ttwo\n     3\tthree")
    assert tool.read_texts == ["two\nthree"]


def test_listing_is_two_levels_deep(user_id, make_tool) -> None:
    tool = make_tool(user_id)
    for path in ("/memories/top.md", "/memories/projects/quickgrep.md", "/memories/projects/deep/more/x.md"):
        tool.call({"command": "create", "path": path, "file_text": "abc"})
    listing = tool.call({"command": "view", "path": "/memories"}).split("\n")
    assert listing[0] == "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:"
    assert listing[1:] == ["9B\t/memories", "6B\t/memories/projects/", "3B\t/memories/projects/deep/",
                           "3B\t/memories/projects/quickgrep.md", "3B\t/memories/top.md"]
    assert "x.md" not in "\n".join(listing)  # three levels down: hidden by the depth limit
    assert tool.read_texts == []  # a listing is not reading a file


def test_create_overwrites_and_refuses_file_dir_clashes(user_id, make_tool) -> None:
    tool = make_tool(user_id)
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "old"})
    assert "overwritten" in tool.call({"command": "create", "path": "/memories/a.md", "file_text": "new"})
    with pytest.raises(ToolError, match="is a file, not a directory"):
        tool.call({"command": "create", "path": "/memories/a.md/b.md", "file_text": "x"})
    tool.call({"command": "create", "path": "/memories/dir/b.md", "file_text": "x"})
    with pytest.raises(ToolError, match="is a directory"):
        tool.call({"command": "create", "path": "/memories/dir", "file_text": "x"})


def test_str_replace_and_insert(user_id, make_tool) -> None:
    tool = make_tool(user_id)
    tool.call({"command": "create", "path": "/memories/p.md", "file_text": "# P\n- Lives in Pune\n- Likes tea\n"})
    result = tool.call({"command": "str_replace", "path": "/memories/p.md", "old_str": "Pune", "new_str": "Oslo"})
    assert result.startswith("The memory file has been edited.") and "- Lives in Oslo" in result
    with pytest.raises(ToolError, match="did not appear verbatim"):
        tool.call({"command": "str_replace", "path": "/memories/p.md", "old_str": "Pune", "new_str": "x"})
    with pytest.raises(ToolError, match="Multiple occurrences"):
        tool.call({"command": "str_replace", "path": "/memories/p.md", "old_str": "- L", "new_str": "x"})
    assert tool.call({"command": "insert", "path": "/memories/p.md", "insert_line": 1, "insert_text": "- Has a dog\n"}) \
        == "The file /memories/p.md has been edited."
    with pytest.raises(ToolError, match=r"range \[0, 4\]"):
        tool.call({"command": "insert", "path": "/memories/p.md", "insert_line": 9, "insert_text": "x"})
    assert tool.store.get("/memories/p.md").content == "# P\n- Has a dog\n- Lives in Oslo\n- Likes tea\n"
    assert tool.read_texts == []  # editing is not reading


def test_delete_file_and_directory_and_rename(runtime, user_id, make_tool) -> None:
    tool = make_tool(user_id)
    for path in ("/memories/a.md", "/memories/d/x.md", "/memories/d/y.md", "/memories/e/z.md"):
        tool.call({"command": "create", "path": path, "file_text": path})
    assert tool.call({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/done"}) \
        == "Successfully renamed /memories/d to /memories/done"
    with pytest.raises(ToolError, match="already exists"):
        tool.call({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/done/x.md"})
    with pytest.raises(ToolError, match="into itself"):
        tool.call({"command": "rename", "old_path": "/memories/done", "new_path": "/memories/done/sub"})
    tool.call({"command": "delete", "path": "/memories/done"})
    with pytest.raises(ToolError, match="does not exist"):
        tool.call({"command": "delete", "path": "/memories/done"})
    with pytest.raises(ToolError, match="itself"):
        tool.call({"command": "delete", "path": "/memories"})
    assert [row[1:3] for row in snapshot(runtime.engine, user_id)] == [
        ("/memories/a.md", "/memories/a.md"), ("/memories/e/z.md", "/memories/e/z.md")]


def test_bad_input_is_a_tool_error(user_id, make_tool) -> None:
    tool = make_tool(user_id)
    with pytest.raises(ToolError, match="Unknown command"):
        tool.call({"command": "format_disk", "path": "/memories"})
    with pytest.raises(ToolError, match="file_text"):
        tool.call({"command": "create", "path": "/memories/a.md"})
    with pytest.raises(ToolError, match="insert_line"):
        tool.call({"command": "insert", "path": "/memories/a.md", "insert_line": "second", "insert_text": "x"})
    assert all(call.is_error for call in tool.calls) and len(tool.calls) == 3


def test_file_size_cap(runtime, user_id, make_tool) -> None:
    tool = make_tool(user_id)
    with pytest.raises(ToolError, match="over the 20,000-character limit"):
        tool.call({"command": "create", "path": "/memories/big.md", "file_text": "x" * (MAX_FILE_CHARS + 1)})
    assert snapshot(runtime.engine, user_id) == []
    tool.call({"command": "create", "path": "/memories/full.md", "file_text": "a" + "y" * (MAX_FILE_CHARS - 1)})
    before = snapshot(runtime.engine, user_id)
    with pytest.raises(ToolError, match="20,002 characters"):
        tool.call({"command": "insert", "path": "/memories/full.md", "insert_line": 0, "insert_text": ""})
    with pytest.raises(ToolError, match="limit per file"):
        tool.call({"command": "str_replace", "path": "/memories/full.md", "old_str": "a", "new_str": "zz"})
    assert snapshot(runtime.engine, user_id) == before


def test_files_per_user_cap(runtime, user_id, make_tool) -> None:
    tool = make_tool(user_id)
    for n in range(MAX_FILES_PER_USER):
        tool.call({"command": "create", "path": f"/memories/f{n:03}.md", "file_text": f"- note {n}"})
    with pytest.raises(ToolError, match=f"already holds {MAX_FILES_PER_USER} files \\(limit {MAX_FILES_PER_USER}\\)"):
        tool.call({"command": "create", "path": "/memories/one-more.md", "file_text": "x"})
    # Overwriting an existing file is still allowed at the cap: it adds no file.
    tool.call({"command": "create", "path": "/memories/f000.md", "file_text": "- replaced"})
    with Session(runtime.engine) as session:
        paths = list(session.scalars(select(MemoryFile.path).where(MemoryFile.user_id == user_id)))
    assert len(paths) == MAX_FILES_PER_USER and "/memories/one-more.md" not in paths


def test_an_edit_from_a_stale_read_never_overwrites(runtime, user_id, make_tool) -> None:
    tool = make_tool(user_id)
    tool.call({"command": "create", "path": "/memories/p.md", "file_text": "- Lives in Pune\n"})
    stale = tool.store.get("/memories/p.md").content
    tool.store.write("/memories/p.md", "- Lives in Pune\n- Has a dog\n")  # another turn wrote meanwhile
    with pytest.raises(ToolError, match="changed while this edit was being made"):
        tool.store.write("/memories/p.md", "- Lives in Oslo\n", expected=stale)
    with pytest.raises(ToolError, match="changed while it was being deleted"):
        tool.store.delete("/memories/p.md", expected=stale)
    assert tool.store.get("/memories/p.md").content == "- Lives in Pune\n- Has a dog\n"

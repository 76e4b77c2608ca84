"""Memories that live in files (a record whose `extra` carries a `path`), seen as a tree.

Generic over `MemoryRecord`: any backend whose records name a path and a line shows up
here; a file's text is rebuilt from its line records, and deleting goes through the
backend's own `delete_memory`, line by line, so the backend keeps its invariants.
"""

from __future__ import annotations

from collections import defaultdict

from backends.base import MemoryBackend, MemoryRecord


def file_records(records: list[MemoryRecord]) -> dict[str, list[MemoryRecord]]:
    """path -> its line records in line order."""
    files: dict[str, list[MemoryRecord]] = defaultdict(list)
    for record in records:
        if record.location is not None:
            files[record.location.path].append(record)
    return {path: sorted(lines, key=lambda r: r.location.line if r.location else 0) for path, lines in sorted(files.items())}


def tree_lines(paths: list[str]) -> list[str]:
    """An indented tree of the paths (directories once, files as leaves)."""
    lines: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for path in sorted(paths):
        parts = [part for part in path.split("/") if part]
        for depth in range(len(parts)):
            prefix = tuple(parts[: depth + 1])
            if prefix in seen:
                continue
            seen.add(prefix)
            leaf = depth == len(parts) - 1
            lines.append("    " * depth + ("📄 " if leaf else "📁 ") + parts[depth] + ("" if leaf else "/"))
    return lines


def file_text(lines: list[MemoryRecord]) -> str:
    return "\n".join(record.content for record in lines)


def delete_file(backend: MemoryBackend, user_id: str, lines: list[MemoryRecord]) -> int:
    """Delete every line of the file through the backend; returns how many went."""
    return sum(backend.delete_memory(user_id, record.id) for record in lines)

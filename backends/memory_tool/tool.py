"""The memory tool's six commands over the Postgres file store, as the SDK's
`BetaAbstractMemoryTool` subclass, so `client.beta.messages.tool_runner` runs it unchanged.

Result texts follow the SDK's own filesystem implementation (line-numbered views, the
two-level listing) because that is the format Claude is trained on. Every failure is a
`ToolError`: the runner sends it back as an `is_error` tool result the model can recover
from, never an exception up the stack. Each call is recorded for the lab (command, path,
result summary), and the text of every file read this turn is kept: the evals treat it as
what this backend "injected".
"""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from backends.base import ToolCall
from backends.memory_tool.paths import MEMORY_ROOT, canonical_path
from backends.memory_tool.store import MemoryFileStore

TOOL_NAME = "memory"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
LINE_NUMBER_WIDTH = 6
SUMMARY_CHARS = 300


def _size(chars: int) -> str:
    """Listing sizes as the SDK prints them (1.5K); characters stand in for bytes here."""
    size, unit = float(chars), "B"
    for next_unit in ("K", "M"):
        if size < 1024:
            break
        size, unit = size / 1024, next_unit
    return f"{int(size)}{unit}" if size == int(size) else f"{size:.1f}{unit}"


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{str(first + i).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines))


def _lines(content: str) -> list[str]:
    """Lines without the empty tail a trailing newline leaves (as the SDK's insert counts them)."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _require(value: Any, name: str, kind: type) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ToolError(f"The `{name}` parameter is required and must be a {kind.__name__}.")
    return value


class PostgresMemoryTool(BetaAbstractMemoryTool):
    """One user's /memories for one turn (a new instance per turn keeps the records apart)."""

    def __init__(self, store: MemoryFileStore, enabled: bool = True) -> None:
        super().__init__()
        self.store = store
        self.enabled = enabled
        """False for an incognito turn: the tool stays offered (same cached prefix, and replayed
        tool_use blocks stay valid) but every command is refused, so nothing is read or written."""
        self.calls: list[ToolCall] = []
        self.read_texts: list[str] = []

    # -- dispatch with a record of every call ------------------------------------
    def call(self, input: object) -> str:
        payload = input if isinstance(input, dict) else {}
        command = payload.get("command")
        path = payload.get("path", payload.get("old_path"))
        try:
            if not self.enabled:
                raise ToolError("Memory is off for this turn (incognito): nothing can be read or saved. "
                                "Answer without memory.")
            if command not in COMMANDS:
                raise ToolError(f"Unknown command {command!r}: use one of {', '.join(COMMANDS)}.")
            result = str(super().call(payload))
        except ToolError as error:
            self._record(payload, command, path, str(error), is_error=True)
            raise
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            # construct_type_unchecked does not validate: a missing field surfaces here.
            message = f"Invalid input for the {command} command: {error}"
            self._record(payload, command, path, message, is_error=True)
            raise ToolError(message) from None
        self._record(payload, command, path, result, is_error=False)
        return result

    def _record(self, payload: dict[str, Any], command: Any, path: Any, result: str, is_error: bool) -> None:
        summary = result if len(result) <= SUMMARY_CHARS else result[:SUMMARY_CHARS] + "..."
        self.calls.append(ToolCall(
            name=TOOL_NAME, command=str(command) if command is not None else None,
            path=str(path) if path is not None else None, input=payload, result=summary, is_error=is_error))

    # -- the six commands ------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = command.path
        if canonical_path(path) == MEMORY_ROOT:
            return self._listing(path)
        try:
            content = self.store.read(path)  # files first: one round trip for the common case
        except ToolError:
            if self.store.is_dir(path):
                return self._listing(path)
            raise
        lines = content.split("\n")
        first, shown = 1, lines
        view_range = getattr(command, "view_range", None)
        if view_range:
            if len(view_range) != 2 or not all(isinstance(n, int) for n in view_range):
                raise ToolError("`view_range` must be two line numbers, [start, end] (end -1 for the last line).")
            start = max(1, view_range[0])
            end = len(lines) if view_range[1] == -1 else view_range[1]
            first, shown = start, lines[start - 1:end]
        self.read_texts.append("\n".join(shown))
        return f"Here's the content of {canonical_path(path)} with line numbers:\n" + _numbered(shown, first)

    def _listing(self, path: str) -> str:
        entries = self.store.listing(path)
        root = canonical_path(path)
        header = f"Here're the files and directories up to 2 levels deep in {root}, excluding hidden items:"
        total = sum(entry.size for entry in entries if entry.path.count("/") == root.count("/") + 1)
        lines = [f"{_size(total)}\t{root}"]
        lines += [f"{_size(entry.size)}\t{entry.path}{'/' if entry.is_dir else ''}" for entry in entries]
        return header + "\n" + "\n".join(lines)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        text = _require(command.file_text, "file_text", str)
        if self.store.create(command.path, text):
            return f"File created successfully at: {command.path}"
        return f"File {command.path} already existed and was overwritten."

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        old = _require(command.old_str, "old_str", str)
        new = _require(command.new_str, "new_str", str)
        if old == "":
            raise ToolError("`old_str` must not be empty: give the exact text to replace.")
        content = self._existing(command.path)
        count = content.count(old)
        shown = old if len(old) <= 80 else old[:77] + "..."
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{shown}` did not appear verbatim in {command.path}.")
        if count > 1:
            lines = sorted({content[:i].count("\n") + 1 for i in _positions(content, old)})
            listed = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
            raise ToolError(f"No replacement was performed. Multiple occurrences ({count}) of old_str `{shown}` in lines: "
                            f"{listed}. Please ensure it is unique")
        changed_line = content[:content.find(old)].count("\n")
        updated = content.replace(old, new)
        self.store.write(command.path, updated, expected=content)
        new_lines = updated.split("\n")
        start = max(0, changed_line - 2)
        snippet = _numbered(new_lines[start:changed_line + 3], start + 1)
        return "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" + snippet

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        line = _require(command.insert_line, "insert_line", int)
        text = _require(command.insert_text, "insert_text", str)
        content = self._existing(command.path)
        lines = _lines(content)
        if line < 0 or line > len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {len(lines)}].")
        lines.insert(line, text.rstrip("\n"))
        self.store.write(command.path, "\n".join(lines) + "\n", expected=content)
        return f"The file {command.path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        self.store.delete(command.path)
        return f"Successfully deleted {command.path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        self.store.rename(command.old_path, command.new_path)
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    def _existing(self, path: str) -> str:
        """The content of a file about to be edited (editing is not reading: no last_read_at)."""
        found = self.store.get(path)
        if found is None:
            if self.store.is_dir(path):
                raise ToolError(f"The path {path} is a directory, not a file.")
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return found.content


def _positions(content: str, needle: str) -> list[int]:
    found, start = [], content.find(needle)
    while start != -1:
        found.append(start)
        start = content.find(needle, start + 1)
    return found

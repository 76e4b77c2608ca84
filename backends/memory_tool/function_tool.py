"""The memory tool as ONE plain function tool, for OpenAI-compatible providers.

Only Anthropic's API knows the `memory_20250818` tool type, so elsewhere the same six
commands are described by a JSON schema and the calls are dispatched to the very same
`PostgresMemoryTool`. The schema is one flat object with a `command` enum rather than a
`oneOf` of six objects: OpenAI requires a top-level object for function parameters, and
local servers (llama.cpp, Ollama) handle flat schemas far more reliably. The per-command
requirements are in the descriptions and enforced by the tool, which returns a tool error
the model can correct.
"""

from __future__ import annotations

from typing import Any

from backends.memory_tool.tool import COMMANDS, TOOL_NAME

MEMORY_FUNCTION_TOOL: dict[str, Any] = {
    "name": TOOL_NAME,
    "description": (
        "Read and edit your persistent memory directory /memories (files survive between conversations). "
        "Commands: view {path, view_range?} lists a directory two levels deep or shows a file with line numbers; "
        "create {path, file_text} makes a new file; str_replace {path, old_str, new_str} replaces one unique "
        "occurrence; insert {path, insert_line, insert_text} inserts after line insert_line (0 = top); "
        "delete {path} removes a file or directory; rename {old_path, new_path} moves a file or directory. "
        "All paths start with /memories."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": list(COMMANDS), "description": "Which operation to run"},
            "path": {"type": "string", "description": "view, create, str_replace, insert, delete: a path under /memories"},
            "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                           "description": "view (optional): [first line, last line], -1 for the end"},
            "file_text": {"type": "string", "description": "create: the whole content of the new file"},
            "old_str": {"type": "string", "description": "str_replace: exact text that occurs once in the file"},
            "new_str": {"type": "string", "description": "str_replace: the replacement text"},
            "insert_line": {"type": "integer", "description": "insert: line number after which to insert (0 = top)"},
            "insert_text": {"type": "string", "description": "insert: the text to insert"},
            "old_path": {"type": "string", "description": "rename: the current path"},
            "new_path": {"type": "string", "description": "rename: the new path"},
        },
        "required": ["command"],
    },
}

"""Request validation and error shapes of the Messages API.

Why: the emulator must reject what the real API rejects (with the same ``invalid_request_error``
400 shape) so that code developed offline does not break online, and it must turn the loose
JSON the SDK sends into one normalised structure that every behaviour module reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .tokens import (
    BLOCK_OVERHEAD,
    MEDIA_TOKENS,
    MESSAGE_OVERHEAD,
    SYSTEM_OVERHEAD,
    TOOL_OVERHEAD,
    canonical_json,
    text_tokens,
)

MID_CONVERSATION_SYSTEM_BETA = "mid-conversation-system-clear-at-2026-08-21"
MEMORY_TOOL_TYPE = "memory_20250818"
KNOWN_TOOL_TYPES = ("custom", MEMORY_TOOL_TYPE)
MAX_BREAKPOINTS = 4


class ApiError(Exception):
    """An error the server returns in the real API's JSON shape."""

    def __init__(self, status: int, error_type: str, message: str, headers: Optional[dict[str, str]] = None):
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.error_type, "message": self.message}}


def invalid(message: str) -> ApiError:
    """A 400 invalid_request_error, the real API's answer to a malformed request."""
    return ApiError(400, "invalid_request_error", message)


@dataclass
class Message:
    """One input message, normalised: content is always a list of blocks (cache_control kept)."""

    role: str
    blocks: list[dict[str, Any]]
    clear_at: Optional[str] = None
    visible: bool = True

    def text(self) -> str:
        """Concatenated text of the text blocks (what a rule reads as 'what was said')."""
        return "\n".join(b.get("text", "") for b in self.blocks if b.get("type") == "text")


@dataclass
class Segment:
    """A block-boundary unit of the canonical prompt (tool, system block or message block)."""

    canonical: str
    tokens: int
    breakpoint: bool


@dataclass
class Request:
    """A validated Messages API request."""

    model: str
    max_tokens: int
    messages: list[Message]
    system_blocks: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    stream: bool = False
    output_schema: Optional[dict[str, Any]] = None
    top_cache_control: Optional[dict[str, Any]] = None
    betas: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def system_text(self) -> str:
        return "\n".join(b.get("text", "") for b in self.system_blocks)

    def tool_named(self, name: str) -> Optional[dict[str, Any]]:
        for tool in self.tools:
            if tool.get("name") == name and tool.get("type", "custom") == "custom":
                return tool
        return None

    def memory_tool(self) -> Optional[dict[str, Any]]:
        for tool in self.tools:
            if str(tool.get("type", "")) == MEMORY_TOOL_TYPE:
                return tool
        return None

    def segments(self) -> list[Segment]:
        """The prompt as cache segments, in the order the cache hashes them: tools, system, messages."""
        segs: list[Segment] = []
        for tool in self.tools:
            body = {k: v for k, v in tool.items() if k != "cache_control"}
            c = "tool:" + canonical_json(body)
            segs.append(Segment(c, text_tokens(canonical_json(body)) + TOOL_OVERHEAD, "cache_control" in tool))
        for i, block in enumerate(self.system_blocks):
            body = {k: v for k, v in block.items() if k != "cache_control"}
            extra = SYSTEM_OVERHEAD if i == 0 else 0
            segs.append(Segment("system:" + canonical_json(body), block_tokens(body) + extra, "cache_control" in block))
        for mi, msg in enumerate(self.messages):
            for bi, block in enumerate(msg.blocks):
                body = {k: v for k, v in block.items() if k != "cache_control"}
                head = f"msg{mi}:{msg.role}:{msg.clear_at or ''}:" if bi == 0 else "+"
                extra = MESSAGE_OVERHEAD if bi == 0 else 0
                segs.append(Segment(head + canonical_json(body), block_tokens(body) + extra, "cache_control" in block))
        return segs

    def input_tokens_total(self) -> int:
        return sum(s.tokens for s in self.segments())


def block_tokens(block: dict[str, Any]) -> int:
    """Tokens of one content block under the documented approximation (see tokens.py)."""
    btype = block.get("type")
    if btype == "text":
        return text_tokens(str(block.get("text", ""))) + BLOCK_OVERHEAD
    if btype == "tool_use":
        return text_tokens(str(block.get("name", "")) + canonical_json(block.get("input", {}))) + BLOCK_OVERHEAD
    if btype == "tool_result":
        return text_tokens(tool_result_text(block)) + BLOCK_OVERHEAD
    if btype in ("image", "document"):
        return MEDIA_TOKENS
    return text_tokens(canonical_json(block)) + BLOCK_OVERHEAD


def tool_result_text(block: dict[str, Any]) -> str:
    """The text of a tool_result block whose content is a string or a list of blocks."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _normalise_content(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content.strip():
            raise invalid(f"{where}: text content blocks must be non-empty")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise invalid(f"{where}.content: Input should be a valid string or list of content blocks")
    if not content:
        raise invalid(f"{where}: all messages must have non-empty content")
    blocks: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        if not isinstance(block, dict) or "type" not in block:
            raise invalid(f"{where}.content.{j}: content block must be an object with a 'type'")
        if block["type"] == "text" and not str(block.get("text", "")).strip():
            raise invalid(f"{where}.content.{j}: text content blocks must contain non-whitespace text")
        blocks.append(dict(block))
    return blocks


def _betas(headers: dict[str, str]) -> list[str]:
    value = headers.get("anthropic-beta", "")
    return [b.strip() for b in value.split(",") if b.strip()]


def parse_request(body: Any, headers: dict[str, str], *, count_only: bool = False) -> Request:
    """Validate a request body like the real API and normalise it; raises ApiError(400)."""
    if not isinstance(body, dict):
        raise invalid("Request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("model: Field required")
    max_tokens = body.get("max_tokens")
    if not count_only:
        if max_tokens is None:
            raise invalid("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise invalid("max_tokens: Input should be a positive integer")
    betas = _betas(headers)

    # system prompt: string or list of text blocks
    system = body.get("system")
    system_blocks: list[dict[str, Any]] = []
    if isinstance(system, str):
        if system:
            system_blocks = [{"type": "text", "text": system}]
    elif isinstance(system, list):
        for j, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                raise invalid(f"system.{j}: system content blocks must be text blocks")
            if not str(block.get("text", "")).strip():
                raise invalid(f"system.{j}: text content blocks must contain non-whitespace text")
            system_blocks.append(dict(block))
    elif system is not None:
        raise invalid("system: Input should be a valid string or list of text blocks")

    # tools
    tools_raw = body.get("tools") or []
    if not isinstance(tools_raw, list):
        raise invalid("tools: Input should be a valid list")
    tools: list[dict[str, Any]] = []
    for j, tool in enumerate(tools_raw):
        if not isinstance(tool, dict):
            raise invalid(f"tools.{j}: Input should be an object")
        ttype = tool.get("type", "custom")
        if ttype is None:
            ttype = "custom"
        if ttype not in KNOWN_TOOL_TYPES:
            raise invalid(
                f"tools.{j}: Input tag '{ttype}' found using 'type' does not match any of the expected tags: "
                + ", ".join(f"'{t}'" for t in KNOWN_TOOL_TYPES)
            )
        if not isinstance(tool.get("name"), str) or not tool.get("name"):
            raise invalid(f"tools.{j}.name: Field required")
        if ttype == "custom" and not isinstance(tool.get("input_schema"), dict):
            raise invalid(f"tools.{j}.custom.input_schema: Field required")
        if ttype == MEMORY_TOOL_TYPE and tool.get("name") != "memory":
            raise invalid(f"tools.{j}.name: the memory tool must be named 'memory'")
        tools.append(dict(tool))
    names = [t["name"] for t in tools]
    if len(set(names)) != len(names):
        raise invalid("tools: Tool names must be unique.")

    # messages
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise invalid("messages: at least one message is required")
    messages: list[Message] = []
    for i, raw in enumerate(raw_messages):
        where = f"messages.{i}"
        if not isinstance(raw, dict):
            raise invalid(f"{where}: Input should be an object")
        role = raw.get("role")
        if role not in ("user", "assistant", "system"):
            raise invalid(f"{where}.role: Input should be 'user', 'assistant' or 'system'")
        if "content" not in raw:
            raise invalid(f"{where}.content: Field required")
        blocks = _normalise_content(raw.get("content"), where)
        clear_at = None
        if role == "system":
            if MID_CONVERSATION_SYSTEM_BETA not in betas:
                raise invalid(
                    f"{where}.role: 'system' messages require the '{MID_CONVERSATION_SYSTEM_BETA}' beta "
                    "(use client.beta.messages with betas=[...])"
                )
            clear_at = raw.get("clear_at") or "never"
            if clear_at not in ("next_user_message", "never"):
                raise invalid(f"{where}.clear_at: Input should be 'next_user_message' or 'never'")
            if not messages or messages[-1].role != "user":
                raise invalid(f"{where}: a system message is only allowed directly after a user message")
            for j, b in enumerate(blocks):
                if b.get("type") != "text":
                    raise invalid(f"{where}.content.{j}: system messages may only contain text blocks")
        elif "clear_at" in raw:
            raise invalid(f"{where}.clear_at: only permitted on role 'system' messages")
        messages.append(Message(role=role, blocks=blocks, clear_at=clear_at))

    convo = [m for m in messages if m.role != "system"]
    if not convo or convo[0].role != "user":
        raise invalid("messages: first message must use the \"user\" role")
    for prev, cur in zip(convo, convo[1:]):
        if prev.role == cur.role:
            raise invalid("messages: roles must alternate between \"user\" and \"assistant\"")
    _check_tool_pairs(convo)

    # clear_at visibility: a next_user_message system message is hidden once a later user message exists
    for i, msg in enumerate(messages):
        if msg.role == "system" and msg.clear_at == "next_user_message":
            msg.visible = not any(m.role == "user" for m in messages[i + 1 :])

    # structured output
    output_schema = None
    output_config = body.get("output_config") or {}
    if not isinstance(output_config, dict):
        raise invalid("output_config: Input should be an object")
    fmt = output_config.get("format") or body.get("output_format")
    if fmt is not None:
        if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
            raise invalid("output_config.format: expected {'type': 'json_schema', 'schema': {...}}")
        output_schema = fmt["schema"]

    top_cc = body.get("cache_control")
    if top_cc is not None and (not isinstance(top_cc, dict) or top_cc.get("type") != "ephemeral"):
        raise invalid("cache_control: Input tag must be 'ephemeral'")
    req = Request(
        model=model,
        max_tokens=int(max_tokens or 0),
        messages=messages,
        system_blocks=system_blocks,
        tools=tools,
        stream=bool(body.get("stream")),
        output_schema=output_schema,
        top_cache_control=top_cc,
        betas=betas,
        raw=body,
    )
    n_bp = sum(1 for s in req.segments() if s.breakpoint) + (1 if top_cc else 0)
    if n_bp > MAX_BREAKPOINTS:
        raise invalid(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {n_bp}.")
    return req


def _check_tool_pairs(convo: list[Message]) -> None:
    """tool_result blocks must answer tool_use ids of the assistant message right before them."""
    for i, msg in enumerate(convo):
        if msg.role != "user":
            continue
        results = [b.get("tool_use_id") for b in msg.blocks if b.get("type") == "tool_result"]
        if not results:
            continue
        prev_ids = set()
        if i > 0:
            prev_ids = {b.get("id") for b in convo[i - 1].blocks if b.get("type") == "tool_use"}
        for rid in results:
            if rid not in prev_ids:
                raise invalid(
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {rid}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                )

"""Which behaviour answers a request, and the reply it produces (before faults and streaming).

Why one dispatcher: the same request must always take the same path (determinism), and the
order of checks encodes the contracts: a JSON schema wins (structured outputs), then Mem0's
extraction prompt, then the memory-tool agent, then the ``forget`` tool, then plain chat.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from . import structured
from .rules import agent
from .rules import reply as chat
from .rules.formats import is_mem0_extraction, mem0_memories
from .rules.forget import forget_topic
from .protocol import Request, tool_result_text
from .tokens import canonical_json, text_tokens, truncate_to_tokens


@dataclass
class Reply:
    """Content blocks, stop reason and output token count of one reply."""

    content: list[dict[str, Any]]
    stop_reason: str

    def output_tokens(self) -> int:
        total = 0
        for b in self.content:
            if b["type"] == "text":
                total += text_tokens(b["text"])
            elif b["type"] == "tool_use":
                total += text_tokens(b["name"] + canonical_json(b["input"]))
        return max(1, total)


def _text(text: str) -> Reply:
    return Reply([{"type": "text", "text": text}], "end_turn")


def _forget_flow(req: Request) -> Reply | None:
    """tool_use ``forget`` for a forget request; after its result, a confirmation.

    Mid-conversation system messages (injected notes) may follow the user turn, so the
    turn is read from the last user or assistant message, not the last message."""
    last = [m for m in req.messages if m.role != "system"][-1]
    if last.role == "user":
        results = [b for b in last.blocks if b.get("type") == "tool_result"]
        if results:
            prev = [m for m in req.messages if m.role == "assistant"][-1]
            uses = {b.get("id"): b for b in prev.blocks if b.get("type") == "tool_use"}
            for res in results:
                use = uses.get(res.get("tool_use_id"))
                if use and use.get("name") == "forget":
                    topic = (use.get("input") or {}).get("topic", "")
                    outcome = " ".join(tool_result_text(res).split())[:160]
                    if res.get("is_error"):
                        return _text(f"I tried to forget \"{topic}\", but the memory tool reported an error: {outcome}")
                    return _text(f"Done: I've asked memory to forget \"{topic}\" ({outcome}).")
            return None
    topic = forget_topic(chat.last_user_text(req)) if last.role == "user" and last.text().strip() else None
    if not topic:
        return None
    digest = hashlib.sha256(canonical_json([m.blocks for m in req.messages]).encode()).hexdigest()[:20]
    return Reply([
        {"type": "text", "text": f"I'll forget \"{topic}\"."},
        {"type": "tool_use", "id": f"toolu_offline_{digest}", "name": "forget", "input": {"topic": topic}},
    ], "tool_use")


def respond(req: Request) -> Reply:
    """The reply for a validated request."""
    if req.output_schema is not None:
        return _text(structured.render(structured.build_instance(req)))
    user_text = chat.last_user_text(req)
    if is_mem0_extraction(req.system_text, user_text):
        return _text(json.dumps(mem0_memories(user_text), ensure_ascii=False))
    if agent.is_agent_request(req):
        content, stop = agent.step(req)
        return Reply(content, stop)
    if req.tool_named("forget") is not None:
        reply = _forget_flow(req)
        if reply is not None:
            return reply
    return _text(chat.reply(req))


def truncate(reply: Reply, max_tokens: int, *, force_half: bool = False) -> Reply:
    """Cut the text to ``max_tokens`` (or to half, for the max_tokens fault); stop_reason max_tokens."""
    text_blocks = [b for b in reply.content if b["type"] == "text"]
    if not text_blocks:
        return reply
    text = text_blocks[0]["text"]
    limit = max_tokens
    if force_half:
        limit = min(max_tokens, max(1, text_tokens(text) // 2))
    if text_tokens(text) <= limit and not force_half:
        return reply
    cut = truncate_to_tokens(text, limit)
    if force_half and len(cut) >= len(text):
        cut = text[: max(1, len(text) // 2)]
    return Reply([{"type": "text", "text": cut}], "max_tokens")


def malformed(reply: Reply) -> Reply:
    """Break the JSON of a (structured) reply, as a misbehaving model would."""
    text = next((b["text"] for b in reply.content if b["type"] == "text"), "{}")
    broken = text.rstrip().rstrip("}") + ', "oops": }'
    return Reply([{"type": "text", "text": broken}], "end_turn")

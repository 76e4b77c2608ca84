"""The OpenAI-compatible path: the six commands as one function tool, the loop run over
`ChatModel.chat`. The model is a scripted stand-in (no OpenAI-compatible server exists
offline); the store, the tool and the persistence are the real ones."""

from __future__ import annotations

import json
import uuid
from typing import Any

from backends.base import TurnContext, Usage
from backends.memory_tool.backend import MemoryToolBackend
from backends.memory_tool.function_tool import MEMORY_FUNCTION_TOOL
from runtime import Runtime
from llm.chat_model import ChatResponse
from llm.openai_chat import to_openai_messages, to_openai_tools
from settings import load_settings


class ScriptedModel:
    """Answers with the next scripted tool call (or text) and records every request."""

    provider, model, label, billed = "openai", "scripted", "scripted (test)", False
    supports_tool_runner = False

    def __init__(self, script: list[dict[str, Any] | tuple[str, dict[str, Any]] | str]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []

    def chat(self, system, messages, tools=None, on_text=None, max_tokens=1024) -> ChatResponse:
        self.requests.append({"system": system, "messages": json.loads(json.dumps(messages)), "tools": tools})
        step = self.script.pop(0) if self.script else "done"
        usage = Usage(input_tokens=10, output_tokens=2)
        if isinstance(step, str):
            if on_text:
                on_text(step)
            return ChatResponse(text=step, content=[{"type": "text", "text": step}], usage=usage, stop_reason="end_turn")
        text, step = step if isinstance(step, tuple) else ("", step)
        if text and on_text:
            on_text(text)
        call = {"type": "tool_use", "id": f"call_{len(self.requests)}", "name": "memory", "input": step}
        content = ([{"type": "text", "text": text}] if text else []) + [call]
        return ChatResponse(text=text, content=content, usage=usage, stop_reason="tool_use")

    def parse(self, *args, **kwargs):
        return None


def runtime_with(runtime: Runtime, model: ScriptedModel, **settings) -> Runtime:
    scripted = Runtime(settings=load_settings(**settings), engine=runtime.engine, embedder=runtime.embedder,
                       clock=runtime.clock)
    scripted.chat_model = model  # replaces the cached_property for this runtime only
    return scripted


def test_schema_is_a_flat_object_openai_accepts() -> None:
    [tool] = to_openai_tools([MEMORY_FUNCTION_TOOL])
    parameters = tool["function"]["parameters"]
    assert tool["function"]["name"] == "memory" and parameters["type"] == "object"
    assert parameters["properties"]["command"]["enum"] == ["view", "create", "str_replace", "insert", "delete", "rename"]


def test_function_tool_loop_runs_the_same_commands(runtime, user_id) -> None:
    model = ScriptedModel([
        {"command": "view", "path": "/memories"},
        {"command": "create", "path": "/memories/profile.md", "file_text": "- Lives in Pune\n"},
        {"command": "view", "path": "/memories/../../etc/passwd"},
        {"command": "view", "path": "/memories/profile.md"},
        "You live in Pune.",
    ])
    backend = MemoryToolBackend(runtime_with(runtime, model))
    chunks: list[str] = []
    result = backend.turn(TurnContext(user_id=user_id, text="I live in Pune."), on_text=chunks.append)
    assert result.error is None and result.reply == "You live in Pune." == "".join(chunks)
    assert all(request["tools"] == [MEMORY_FUNCTION_TOOL] for request in model.requests)
    assert [(c.command, c.is_error) for c in result.tool_calls] == [
        ("view", False), ("create", False), ("view", True), ("view", False)]
    assert result.read_texts == ["- Lives in Pune\n"]
    assert backend.stored_texts(user_id) == ["- Lives in Pune"]
    assert result.usage == Usage(input_tokens=50, output_tokens=10)

    # The third request carried the error back as a tool result the model can act on.
    refused = model.requests[3]["messages"][-1]["content"][0]
    assert refused["is_error"] is True and refused["content"].startswith("Invalid path")
    # The persisted exchange converts to a valid OpenAI transcript (each tool call answered).
    payloads = [json.loads(m.payload) for m in runtime.store.load_messages(uuid.UUID(result.conversation_id), user_id)]
    converted = to_openai_messages("system", payloads)
    calls = [c["id"] for m in converted if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answers = [m["tool_call_id"] for m in converted if m["role"] == "tool"]
    assert calls == answers == ["call_1", "call_2", "call_3", "call_4"]


def test_function_tool_loop_stops_at_the_cap(runtime, user_id) -> None:
    model = ScriptedModel([{"command": "view", "path": "/memories"}] * 10)
    backend = MemoryToolBackend(runtime_with(runtime, model, agent_max_iterations=3))
    result = backend.turn(TurnContext(user_id=user_id, text="Hello"))
    assert len(model.requests) == 3 and len(result.tool_calls) == 3
    assert result.error is not None and "after 3 steps" in result.error


def test_an_empty_reply_is_stored_as_a_marker(runtime, user_id) -> None:
    model = ScriptedModel([""])
    backend = MemoryToolBackend(runtime_with(runtime, model))
    result = backend.turn(TurnContext(user_id=user_id, text="Hello"))
    assert result.error is None and result.reply == ""
    payloads = [json.loads(m.payload) for m in runtime.store.load_messages(uuid.UUID(result.conversation_id), user_id)]
    assert payloads[-1] == {"role": "assistant", "content": [{"type": "text", "text": "(empty reply)"}]}


def test_streamed_text_equals_the_reply_across_steps(runtime, user_id) -> None:
    model = ScriptedModel([("Let me check my notes.", {"command": "view", "path": "/memories"}), "Nothing saved yet."])
    backend = MemoryToolBackend(runtime_with(runtime, model))
    chunks: list[str] = []
    result = backend.turn(TurnContext(user_id=user_id, text="What do you know?"), on_text=chunks.append)
    assert result.reply == "Let me check my notes.\n\nNothing saved yet." == "".join(chunks)

"""The OpenAI-compatible provider: translation of our Anthropic-shaped messages, streaming,
and json_schema structured output, against canned responses on an httpx transport."""

from __future__ import annotations

import json

import httpx2
import openai
from pydantic import BaseModel

from llm.openai_chat import OpenAIChat, to_openai_messages


class Facts(BaseModel):
    facts: list[str]


def _chat_with(handler) -> OpenAIChat:
    from settings import load_settings

    chat = OpenAIChat(load_settings(llm_provider="openai", openai_base_url="http://canned.invalid/v1"), model="llama3.1")
    chat.client = openai.OpenAI(api_key="unused", base_url="http://canned.invalid/v1",
                                http_client=httpx2.Client(transport=httpx2.MockTransport(handler)), max_retries=0)
    return chat


def test_cleared_system_notes_are_dropped_and_tools_become_tool_messages():
    messages = [
        {"role": "user", "content": "I'm vegetarian"},
        {"role": "system", "content": "<memory_notes>old</memory_notes>", "clear_at": "next_user_message"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "forget", "input": {"topic": "x"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "deleted 1"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        {"role": "user", "content": "What should I cook?"},
        {"role": "system", "content": "<memory_notes>new</memory_notes>", "clear_at": "next_user_message"},
    ]
    converted = to_openai_messages("SYSTEM", messages)
    assert [m["role"] for m in converted] == ["system", "user", "assistant", "tool", "assistant", "user", "system"]
    assert "old" not in json.dumps(converted) and converted[-1]["content"] == "<memory_notes>new</memory_notes>"
    assert converted[2]["tool_calls"][0]["function"] == {"name": "forget", "arguments": '{"topic": "x"}'}
    assert converted[3] == {"role": "tool", "tool_call_id": "t1", "content": "deleted 1"}


def test_streamed_reply_and_usage():
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 2, "total_tokens": 32,
                                  "prompt_tokens_details": {"cached_tokens": 20}}},
    ]
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "llama3.1"}
    body = "".join(f"data: {json.dumps(base | chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    seen: list[dict] = []

    def handler(request):
        seen.append(json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())

    streamed: list[str] = []
    response = _chat_with(handler).chat("SYSTEM", [{"role": "user", "content": "hi"}], on_text=streamed.append)
    assert streamed == ["Hel", "lo"] and response.text == "Hello"
    assert (response.usage.input_tokens, response.usage.cache_read_tokens, response.usage.output_tokens) == (10, 20, 2)
    assert seen[0]["messages"][0] == {"role": "system", "content": "SYSTEM"}


def test_structured_output_uses_json_schema():
    seen: list[dict] = []

    def handler(request):
        seen.append(json.loads(request.content))
        message = {"role": "assistant", "content": json.dumps({"facts": ["User is vegetarian."]})}
        return httpx2.Response(200, json={"id": "c2", "object": "chat.completion", "created": 0, "model": "llama3.1",
                                          "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                          "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})

    parsed = _chat_with(handler).parse("EXTRACT", [{"role": "user", "content": "I'm vegetarian"}], Facts)
    assert parsed == Facts(facts=["User is vegetarian."])
    assert seen[0]["response_format"]["type"] == "json_schema"
    assert "facts" in json.dumps(seen[0]["response_format"]["json_schema"]["schema"])

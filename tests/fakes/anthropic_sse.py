"""Canned Anthropic Messages API responses on an httpx transport, recording every request.

Used to test our request building (bytes, headers, beta flags) independently of the
offline model: the SDK talks to this transport exactly as it would to the API.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def sse_body(text: str, model: str, usage: dict[str, int]) -> bytes:
    message = {"id": "msg_canned", "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}
    events = [
        _event("message_start", {"type": "message_start", "message": message}),
        _event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                 "usage": {"output_tokens": max(1, len(text) // 4)}}),
        _event("message_stop", {"type": "message_stop"}),
    ]
    return "".join(events).encode()


class CannedAnthropic:
    """An Anthropic client whose transport answers every call with a canned stream."""

    def __init__(self, fail_status: int | None = None) -> None:
        self.fail_status = fail_status
        self.requests: list[httpx2.Request] = []
        self.client = anthropic.Anthropic(
            api_key="test-key", base_url="http://canned.invalid",
            http_client=httpx2.Client(transport=httpx2.MockTransport(self._handle)), max_retries=0,
        )

    def _handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if self.fail_status is not None:
            error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
            return httpx2.Response(self.fail_status, json=error)
        body = json.loads(request.content)
        reply = f"canned reply {len(self.requests)}"
        usage = {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                              content=sse_body(reply, body["model"], usage))

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]

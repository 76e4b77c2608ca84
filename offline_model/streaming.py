"""Server-sent events in the real Messages API's order and shapes.

Why: ``client.messages.stream`` and the tool runner accumulate a message from these events;
the order (message_start, ping, content_block_start/delta/stop per block, message_delta with
stop_reason and usage, message_stop) and the shapes must match or the SDK's accumulator fails.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

TEXT_CHUNK = 24  # characters per text_delta
JSON_CHUNK = 32  # characters per input_json_delta


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def events(message: dict[str, Any]) -> Iterator[str]:
    """The SSE stream for a complete (non-streaming) message dict."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**usage, "output_tokens": 1}}
    yield sse("message_start", {"type": "message_start", "message": start})
    yield sse("ping", {"type": "ping"})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield sse("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "text", "text": ""}})
            text = block["text"]
            for i in range(0, len(text), TEXT_CHUNK):
                yield sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "text_delta", "text": text[i : i + TEXT_CHUNK]}})
        elif block["type"] == "tool_use":
            yield sse("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "tool_use", "id": block["id"],
                                                                "name": block["name"], "input": {}}})
            raw = json.dumps(block["input"], ensure_ascii=False)
            for i in range(0, len(raw), JSON_CHUNK):
                yield sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "input_json_delta", "partial_json": raw[i : i + JSON_CHUNK]}})
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield sse("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                "usage": usage})
    yield sse("message_stop", {"type": "message_stop"})

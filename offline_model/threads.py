"""Server-held conversation state ("message threads", beta ``message-threads-2026-08-12``).

Why: anthropic 2.16's ``client.beta.messages.tool_runner`` sends ``thread: {"type": "create"}`` on
its first request and then ``thread: {"type": "continue", "previous_message_id": <id>}`` with ONLY
the new messages (tool results) and without ``system``/``tools``. The emulator must hold each
reply's full conversation under its id so a continuation can be expanded back into a complete,
stateless request. An unknown id answers ``thread_not_found`` (error.details.error_code), which
makes the SDK replay the full history under a new thread, as it does with the real API.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from typing import Any, Optional

from .protocol import ApiError, invalid

CREATE_ONLY_FIELDS = ("system", "tools")
MAX_THREADS = 2000


class ThreadStore:
    """Bounded map: response id -> (request fields, full message history including that response)."""

    def __init__(self, capacity: int = MAX_THREADS):
        self.capacity = capacity
        self._items: "OrderedDict[str, tuple[dict[str, Any], list[Any]]]" = OrderedDict()
        self._lock = threading.Lock()

    def expand(self, body: Any) -> tuple[Any, bool]:
        """The stateless body for ``body`` (thread removed, history restored) and whether to store the reply."""
        if not isinstance(body, dict) or "thread" not in body:
            return body, False
        body = dict(body)
        thread = body.pop("thread")
        if thread is None or thread is False:
            return body, False
        if not isinstance(thread, dict) or thread.get("type") not in ("create", "continue"):
            raise invalid("thread: Input tag must be 'create' or 'continue'")
        if thread["type"] == "create":
            return body, True
        prev = thread.get("previous_message_id")
        with self._lock:
            stored = self._items.get(str(prev))
            if stored is not None:
                self._items.move_to_end(str(prev))
        if stored is None:
            err = ApiError(404, "not_found_error", f"thread: no stored conversation for previous_message_id {prev!r}")
            err.extra = {"details": {"error_code": "thread_not_found"}}  # type: ignore[attr-defined]
            raise err
        fields, history = stored
        merged = {**copy.deepcopy(fields), **{k: v for k, v in body.items() if k not in CREATE_ONLY_FIELDS}}
        merged["messages"] = copy.deepcopy(history) + list(body.get("messages") or [])
        return merged, True

    def store(self, message_id: str, body: dict[str, Any], reply: dict[str, Any]) -> None:
        """Remember the conversation ending with ``reply`` under its id."""
        fields = {k: v for k, v in body.items() if k not in ("messages", "stream")}
        history = list(body.get("messages") or []) + [{"role": "assistant", "content": reply["content"]}]
        with self._lock:
            self._items[message_id] = (fields, history)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)


def error_body(err: ApiError) -> dict[str, Any]:
    body = err.body()
    extra: Optional[dict[str, Any]] = getattr(err, "extra", None)
    if extra:
        body["error"].update(extra)
    return body

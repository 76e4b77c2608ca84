"""Fault injection, so reliability code (retries, timeouts, truncation handling) can be tested offline.

Why: the real API fails in a handful of well-known ways; code that talks to it must survive
them, and the only way to test that deterministically is to make the emulator fail on demand.

Faults (names):

* ``rate_limit``    HTTP 429 ``rate_limit_error`` with a ``retry-after`` header (SDK: RateLimitError)
* ``overloaded``    HTTP 529 ``overloaded_error`` (SDK: OverloadedError / APIStatusError 529)
* ``server_error``  HTTP 500 ``api_error`` (SDK: InternalServerError)
* ``timeout``       the server sleeps ``seconds`` (default 10) before answering (SDK: APITimeoutError
                    when the client's timeout is shorter)
* ``max_tokens``    the reply is cut to half its tokens (text, or JSON for structured output) and
                    ``stop_reason`` is ``"max_tokens"``
* ``malformed_json`` structured output comes back as broken JSON with ``stop_reason`` ``"end_turn"``

How to use:

* per request: header ``x-offline-fault: <name>`` (optionally ``<name>;seconds=0.5`` or
  ``<name>;retry_after=2``), e.g. ``client.messages.create(..., extra_headers={"x-offline-fault":
  "rate_limit"})`` or ``anthropic.Anthropic(..., default_headers={...})``. The header applies to
  every request that carries it (so SDK retries fail again).
* on the server: ``server.faults.inject("overloaded", times=2)`` makes the next 2 requests fail,
  then requests succeed again (good for retry tests); ``server.faults.inject("timeout",
  times=None, seconds=3)`` fails every request until ``server.faults.clear()``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Optional

FAULT_HEADER = "x-offline-fault"
FAULT_NAMES = ("rate_limit", "overloaded", "server_error", "timeout", "max_tokens", "malformed_json")


@dataclass
class Fault:
    """One fault to apply to a request."""

    name: str
    seconds: float = 10.0
    retry_after: int = 1

    @classmethod
    def parse(cls, value: str) -> "Fault":
        """Parse ``name[;key=value...]`` as sent in the fault header."""
        parts = [p.strip() for p in value.split(";") if p.strip()]
        if not parts or parts[0] not in FAULT_NAMES:
            raise ValueError(f"unknown fault {value!r}; expected one of {', '.join(FAULT_NAMES)}")
        fault = cls(parts[0])
        for part in parts[1:]:
            key, _, val = part.partition("=")
            if key.strip() == "seconds":
                fault.seconds = float(val)
            elif key.strip() == "retry_after":
                fault.retry_after = int(val)
        return fault


@dataclass
class FaultConfig:
    """Server-side fault schedule; thread-safe."""

    _queue: list[tuple[Fault, Optional[int]]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(self, name: str, times: Optional[int] = 1, *, seconds: float = 10.0, retry_after: int = 1) -> None:
        """Fail the next ``times`` requests with fault ``name`` (``times=None``: until cleared)."""
        if name not in FAULT_NAMES:
            raise ValueError(f"unknown fault {name!r}; expected one of {', '.join(FAULT_NAMES)}")
        with self._lock:
            self._queue.append((Fault(name, seconds=seconds, retry_after=retry_after), times))

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()

    def take(self) -> Optional[Fault]:
        """The fault for the current request, consuming one use of it."""
        with self._lock:
            if not self._queue:
                return None
            fault, times = self._queue[0]
            if times is not None:
                if times <= 1:
                    self._queue.pop(0)
                else:
                    self._queue[0] = (fault, times - 1)
            return fault

"""A prefix prompt cache that behaves like the real one (as documented by Anthropic).

Why: the lab compares memory backends partly by what they cost; the point of injecting memory
notes as a mid-conversation system message (instead of rewriting the system prompt) is that
the prompt cache keeps hitting. The emulator must show that difference with real-looking numbers.

Model:

* The prompt is a sequence of segments at block boundaries, in the order tools, system blocks,
  message blocks (see ``protocol.Request.segments``). The key of a prefix is a SHA-256 chained
  over the model name and the canonical JSON of every segment up to that boundary, so any byte
  change anywhere before a boundary changes the key (exact-prefix semantics).
* Breakpoints: every block carrying ``cache_control`` and, with top-level ``cache_control``
  (automatic caching), the last block of the prompt. At most 4 in total.
* On a request, for each breakpoint the cache looks back up to ``LOOKBACK_BLOCKS`` boundaries
  (including the breakpoint itself) for the longest prefix written earlier and still alive:
  those tokens are ``cache_read_input_tokens``. The prefix up to the LAST breakpoint is then
  written (if long enough): the tokens between the read position and it are
  ``cache_creation_input_tokens``. Everything after the last breakpoint is ``input_tokens``.
* Minimum cacheable prefix: a prefix shorter than ``min_tokens`` (default 1024, like the real
  API for Sonnet/Opus) is neither written nor read. Configurable per server.
* Lifetime: 5 minutes (``ttl: "1h"`` in cache_control gives one hour), refreshed on each hit.
  The clock is injectable so tests can move time without sleeping.
* Cleared mid-conversation system messages stay in the array, so they stay in the hashed
  prefix (and in the token count): send them byte-identically on later turns and the cache
  keeps hitting.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from .protocol import Request, Segment

DEFAULT_MIN_CACHEABLE_TOKENS = 1024
DEFAULT_TTL_SECONDS = 300.0
ONE_HOUR = 3600.0
LOOKBACK_BLOCKS = 20


@dataclass
class CacheUsage:
    """The usage split of one request's input tokens."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


class PromptCache:
    """Process-local prefix cache; thread-safe; time source injectable (``clock``)."""

    def __init__(self, min_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS, clock: Callable[[], float] = time.monotonic):
        self.min_tokens = min_tokens
        self.clock = clock
        self._entries: dict[str, tuple[float, float]] = {}  # key -> (expires_at, ttl)
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    @staticmethod
    def _keys(model: str, segments: list[Segment]) -> list[str]:
        h = hashlib.sha256(("model:" + model).encode())
        keys = []
        for seg in segments:
            h.update(b"\x00" + seg.canonical.encode())
            keys.append(h.copy().hexdigest())
        return keys

    def _alive(self, key: str, now: float) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry[0] > now

    def account(self, req: Request, *, write: bool = True) -> CacheUsage:
        """Compute the usage split for ``req``; with ``write`` (a real request) update the cache."""
        segments = req.segments()
        total = sum(s.tokens for s in segments)
        breakpoints = [i for i, s in enumerate(segments) if s.breakpoint]
        ttl = DEFAULT_TTL_SECONDS
        if req.top_cache_control is not None and segments:
            breakpoints.append(len(segments) - 1)
            if req.top_cache_control.get("ttl") == "1h":
                ttl = ONE_HOUR
        if _any_one_hour(req):
            ttl = ONE_HOUR
        if not breakpoints:
            return CacheUsage(total, 0, 0)
        breakpoints = sorted(set(breakpoints))
        cumulative = []
        running = 0
        for s in segments:
            running += s.tokens
            cumulative.append(running)
        keys = self._keys(req.model, segments)
        now = self.clock()
        with self._lock:
            read_end = -1  # index of last segment covered by a cache read
            for bp in breakpoints:
                for i in range(bp, max(-1, bp - LOOKBACK_BLOCKS), -1):
                    if i <= read_end:
                        break
                    if cumulative[i] >= self.min_tokens and self._alive(keys[i], now):
                        read_end = i
                        break
            last_bp = breakpoints[-1]
            read = cumulative[read_end] if read_end >= 0 else 0
            creation = 0
            if write:
                if read_end >= 0:
                    self._entries[keys[read_end]] = (now + self._entries[keys[read_end]][1], self._entries[keys[read_end]][1])
                for bp in breakpoints:
                    if bp > read_end and cumulative[bp] >= self.min_tokens:
                        self._entries[keys[bp]] = (now + ttl, ttl)
            if last_bp > read_end and cumulative[last_bp] >= self.min_tokens:
                creation = cumulative[last_bp] - read
            self._expire(now)
        return CacheUsage(total - read - creation, creation, read)

    def _expire(self, now: float) -> None:
        dead = [k for k, (exp, _) in self._entries.items() if exp <= now]
        for k in dead:
            del self._entries[k]


def _any_one_hour(req: Request) -> bool:
    for tool in req.tools:
        if (tool.get("cache_control") or {}).get("ttl") == "1h":
            return True
    for block in req.system_blocks:
        if (block.get("cache_control") or {}).get("ttl") == "1h":
            return True
    for msg in req.messages:
        for block in msg.blocks:
            if (block.get("cache_control") or {}).get("ttl") == "1h":
                return True
    return False


def usage_for_count(req: Request) -> int:
    """count_tokens: the total input tokens (input + cache creation + cache read) of ``req``."""
    return req.input_tokens_total()


__all__ = ["PromptCache", "CacheUsage", "DEFAULT_MIN_CACHEABLE_TOKENS", "usage_for_count", "Optional"]

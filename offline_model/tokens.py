"""The ONE token approximation used everywhere (usage, count_tokens, max_tokens truncation).

Why one function: usage and ``count_tokens`` must agree exactly, and the prompt cache reports
token counts of prefixes, so every place that counts must count the same way.

Rule (documented, deliberately simple):

* a piece of text costs ``ceil(len(text) / 4)`` tokens (len in Unicode code points);
* every message costs ``MESSAGE_OVERHEAD`` extra tokens, every content block ``BLOCK_OVERHEAD``;
* a tool definition costs the tokens of its canonical JSON plus ``TOOL_OVERHEAD``;
* a non-empty system prompt costs ``SYSTEM_OVERHEAD`` extra once;
* ``tool_use`` blocks cost the tokens of ``name`` + canonical JSON of ``input``;
* images/documents cost a flat ``MEDIA_TOKENS``.
"""

from __future__ import annotations

import json
import math
from typing import Any

MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 2
TOOL_OVERHEAD = 10
SYSTEM_OVERHEAD = 3
MEDIA_TOKENS = 1000


def text_tokens(text: str) -> int:
    """Tokens of a piece of text: ceil(chars / 4)."""
    return math.ceil(len(text) / 4) if text else 0


def canonical_json(value: Any) -> str:
    """Stable JSON (sorted keys, no spaces) used for hashing and counting structured values."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` that costs at most ``max_tokens`` tokens."""
    return text[: max(0, max_tokens) * 4]

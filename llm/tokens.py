"""One token approximation for budgets (history, memory notes) before a request is sent.

Real counts come back in the model's usage; budgets need a number before the call, and a
tokenizer per provider would be heavier than the decision deserves. Four characters per
token is the usual English average and errs on the generous side for budgets.
"""

from __future__ import annotations

import json
import math
from typing import Any

CHARS_PER_TOKEN = 4


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def approx_message_tokens(message: dict[str, Any]) -> int:
    content = message.get("content", "")
    body = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return approx_tokens(body) + 4

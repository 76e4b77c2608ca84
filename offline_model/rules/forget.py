"""The ``forget`` custom tool: turn a request to forget something into a tool call, then confirm.

Why: the lab's custom pipeline offers a ``forget(topic)`` tool so erasure requests coming through
chat reach the store; the offline model must call it for the same general phrasings a real model
would understand.
"""

from __future__ import annotations

import re
from typing import Optional

FORGET_RE = re.compile(
    r"(?:^|[.!?]\s+|,\s*)(?:(?:can|could|would|will) you\s+)?(?:please\s+)?"
    r"(?:forget|(?:don't|do not|stop|no longer) (?:remember(?:ing)?|keep(?:ing)?|stor(?:e|ing))|"
    r"(?:delete|erase|remove|wipe|purge)(?=\s+(?:what you know|everything|anything|all|the (?:fact|memory|memories|note|notes|info)|my\b|that\b)))"
    r"\s*(?:(?:about|everything (?:you know )?about|all about|what you know about|anything about|everything on|"
    r"the (?:fact|memory|note) that|that|the fact)\s+)*(?P<topic>[^.!?\n]+)",
    re.I,
)


def forget_topic(text: str) -> Optional[str]:
    """The object phrase of a forget request ('forget that I live in Pune' -> 'I live in Pune')."""
    m = FORGET_RE.search(text)
    if not m:
        return None
    topic = m["topic"].strip()
    topic = re.sub(r"\s+(?:please|from (?:your|my) memory|from memory|for good|forever|permanently|now|too)$", "", topic, flags=re.I)
    topic = re.sub(r"^(?:about|that|what you know about|the fact that)\s+", "", topic, flags=re.I).strip(" ,")
    if not topic or topic.lower() in ("it", "that", "this", "me"):
        return None
    return topic

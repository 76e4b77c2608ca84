"""The secret check applied to every extracted operation (content and evidence).

The extraction prompt already forbids storing secrets, but a prompt is a request, not a
guarantee: a model can still copy "my PIN is 4921" into a memory. Memories are re-injected
into later prompts and shown on screen, so a stored secret leaks again and again. The
detector itself is the lab's one shared rule (`core.secrets`), so this pipeline, Mem0's
input and the memory tool's files refuse the same things.
"""

from __future__ import annotations

from core.secrets import contains_secret, iban_valid, luhn_valid, secret_reason

__all__ = ["contains_secret", "iban_valid", "luhn_valid", "secret_reason"]

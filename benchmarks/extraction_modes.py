"""Measure extraction per turn vs per session on one scripted session (calls, tokens, rows).

    .venv/bin/python -m benchmarks.extraction_modes

Runs on scratch storage (scratch.py: never the lab's data) with the offline model (unless an API key
is configured), so it never touches the lab's data. Token counts are the model's own usage
for the extraction calls, captured by wrapping the SDK's `messages.parse` in this script.
"""

from __future__ import annotations

import argparse
import uuid
from dataclasses import dataclass
from typing import Any

SCRIPT = [
    "hello",
    "I live in Bangalore",
    "I'm vegetarian",
    "Can you suggest a quick dinner?",
    "I'm building a side project in Rust",
    "Actually we moved to Pune last month.",
    "I have a dentist appointment on Tuesday",
    "Thanks, that's helpful!",
    "I'm in Goa this week",
    "Please always answer in French.",
]


@dataclass
class ModeResult:
    mode: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    live: int = 0
    versions: int = 0


def _instrument(model: Any, tally: ModeResult) -> None:
    """Count every structured-output call and add up the usage the model reports."""
    messages = model.client.messages
    original = messages.parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        response = original(*args, **kwargs)
        tally.calls += 1
        tally.input_tokens += response.usage.input_tokens + (response.usage.cache_read_input_tokens or 0)
        tally.output_tokens += response.usage.output_tokens
        return response

    messages.parse = counted


def run_mode(mode: str) -> ModeResult:
    from backends.base import Knobs, TurnContext
    from backends.custom.backend import CustomPipelineBackend
    from jobs.runner import drain
    from scratch import scratch_runtime

    runtime = scratch_runtime(extract_when=mode)
    tally = ModeResult(mode)
    _instrument(runtime.extraction_model, tally)
    backend = CustomPipelineBackend(runtime)
    user_id = runtime.store.ensure_user(f"measure-{mode}-{uuid.uuid4().hex[:6]}")
    for text in SCRIPT:
        backend.turn(TurnContext(user_id=user_id, text=text, knobs=Knobs.from_settings(runtime.settings)))
        drain(runtime, user_id=user_id)
    backend.new_conversation(user_id)
    drain(runtime, user_id=user_id)
    tally.live = len(backend.list_memories(user_id))
    tally.versions = len(backend.list_memories(user_id, include_inactive=True))
    return tally


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    results = [run_mode(mode) for mode in ("turn", "session")]
    print(f"scripted session: {len(SCRIPT)} user turns (scratch data, see scratch.py)")
    print("| extract_when | extraction calls | input tokens | output tokens | live memories | stored versions |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r.mode} | {r.calls} | {r.input_tokens} | {r.output_tokens} | {r.live} | {r.versions} |")
    turn, session = results
    if session.input_tokens:
        print(f"turn/session input-token ratio: {turn.input_tokens / session.input_tokens:.1f}x")


if __name__ == "__main__":
    main()

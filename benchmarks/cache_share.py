"""How much of the prompt is read from the prompt cache over a 15-turn conversation.

    .venv/bin/python -m benchmarks.cache_share [--turns 15]

One user, one conversation, 15 turns through each backend on the offline model, which
emulates the API's prompt cache (a prefix of at least 1,024 tokens is cacheable). The
figure is the share of input tokens read from the cache on the turns after the prompt
first passed the cacheable minimum (the first cache read); the baseline is the share over
the whole conversation, turns before the minimum included. Injected notes go in as a
mid-conversation system message and the system prompt never changes, so once caching
starts every later turn should read almost its whole prefix from the cache.
"""

from __future__ import annotations

import argparse
import uuid

from backends.base import TurnContext
from backends.query_vector import with_query_vector
from backends.registry import backend_names, build_backend
from benchmarks.figures import Figure, check, load_average, table
from benchmarks.isolated import isolate
from core.usage import Usage
from jobs.runner import drain
from scratch import scratch_runtime

LINES = [
    "I am planning a garden for the spring and I want vegetables that grow well in clay soil.",
    "We also have a shady corner by the fence; what could grow there?",
    "My partner wants herbs near the kitchen door, mostly basil, thyme and mint.",
    "How often should I water tomatoes in a hot week?",
    "I want to build two raised beds out of untreated wood this weekend.",
    "What spacing do courgettes need, and can they climb a trellis?",
    "We get slugs every year; what keeps them away without poison?",
    "Can I plant garlic now or should I wait until autumn?",
    "My neighbour gave me rhubarb crowns; where should they go?",
    "What is a simple crop rotation for four beds?",
    "I would like flowers that bees love along the path.",
    "How do I start a compost heap in a small corner?",
    "Which of these vegetables can I sow directly outside?",
    "What should I harvest first in early summer?",
    "Please summarise the plan we made today in a few lines.",
]


def shares(usages: list[Usage]) -> tuple[float, float, int | None]:
    """(share read from cache after the first cache read, share over all turns, first cached turn)."""
    def share(items: list[Usage]) -> float:
        total = sum(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens for u in items)
        return sum(u.cache_read_tokens for u in items) / total if total else 0.0

    first = next((index for index, usage in enumerate(usages) if usage.cache_read_tokens > 0), None)
    return (share(usages[first:]) if first is not None else 0.0), share(usages), (None if first is None else first + 1)


def measure(runtime, turns: int) -> dict[str, tuple[float, float, int | None]]:  # noqa: ANN001 - a Runtime
    results = {}
    for name in backend_names():
        backend = build_backend(name, runtime)
        user_id = runtime.store.ensure_user(f"bench-cache-{name}-{uuid.uuid4().hex[:6]}")
        usages = []
        for number in range(turns):
            context = with_query_vector(TurnContext(user_id=user_id, text=LINES[number % len(LINES)]), runtime.embedder)
            result = backend.turn(context)
            assert result.error is None, result.error
            usages.append(result.usage)
            drain(runtime, user_id=user_id)
        results[name] = shares(usages)
    return results


def figures(runtime, quick: bool) -> list[Figure]:  # noqa: ANN001 - a Runtime
    figures_ = []
    for name, (after, overall, first) in measure(runtime, 15).items():
        if first is None:  # the prompt never reached the cacheable minimum: nothing to measure
            figures_.append(Figure(f"cache-read share of input, 15-turn chat, {name} (prompt stays under the "
                                   "cacheable minimum)", float("nan"), "share"))
            continue
        figures_.append(Figure(f"cache-read share of input, 15-turn chat, {name} (from turn {first})", after, "share",
                               *check(after, ">=", 0.9), "share over all 15 turns", overall))
    return figures_


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    isolate()
    print(table(figures(scratch_runtime(), quick=False)))
    print(f"load average {load_average()}")


if __name__ == "__main__":
    main()

"""End-to-end recall as a turn pays for it: embed the message once, then the custom recall.

    .venv/bin/python -m benchmarks.e2e_recall [--queries 100]

A user with 100 live memories (sentences embedded by MiniLM, written with one COPY), then
messages the embedder has never seen (so its cache does not help): each is embedded once
(`with_query_vector`, as the lab's turn does) and recalled by the custom backend. The
baseline is MiniLM alone on the same kind of text, in the same run.
"""

from __future__ import annotations

import argparse
import time
import uuid
from datetime import datetime, timezone

from backends.base import Knobs, TurnContext
from backends.custom.backend import CustomPipelineBackend
from backends.query_vector import with_query_vector
from benchmarks.figures import Figure, check, load_average, percentile, table
from benchmarks.isolated import isolate
from benchmarks.recall_latency import load_rows, time_embedding
from scratch import scratch_runtime

SUBJECTS = ["my sister", "my landlord", "our team", "my dentist", "the neighbours", "my bank", "my coach", "my cousin",
            "the school", "my manager"]
FACTS = ["prefers mornings", "lives near the river", "speaks Portuguese", "is training for a marathon",
         "collects vinyl records", "moved last spring", "dislikes spicy food", "works on Saturdays", "has two cats",
         "plays chess online"]
ASKS = ["What should I get for", "How do I talk to", "Any plan ideas with", "When can I meet", "What to cook for"]


def memories() -> list[str]:
    return [f"User says {subject} {fact}." for subject in SUBJECTS for fact in FACTS]


def messages(count: int) -> list[str]:
    run = uuid.uuid4().hex[:4]  # unseen texts: nothing cached from an earlier run in this process
    return [f"{ASKS[i % len(ASKS)]} {SUBJECTS[i % len(SUBJECTS)]} this week? ({run}-{i})" for i in range(count)]


def measure(runtime, queries: int) -> tuple[list[float], list[float]]:  # noqa: ANN001 - a Runtime
    texts = memories()
    user_id = f"bench-e2e-{uuid.uuid4().hex[:6]}"
    load_rows(runtime.engine, user_id, runtime.embedder.embed_batch(texts), datetime.now(timezone.utc))
    backend = CustomPipelineBackend(runtime)
    knobs = Knobs.from_settings(runtime.settings)
    backend.prepare_turn(TurnContext(user_id=user_id, text="warm-up", knobs=knobs))
    end_to_end = []
    for text in messages(queries):
        started = time.perf_counter()
        backend.prepare_turn(with_query_vector(TurnContext(user_id=user_id, text=text, knobs=knobs), runtime.embedder))
        end_to_end.append((time.perf_counter() - started) * 1000)
    return end_to_end, time_embedding(runtime, messages(queries))


def figures(runtime, quick: bool) -> list[Figure]:  # noqa: ANN001 - a Runtime
    end_to_end, embedding = measure(runtime, 60 if quick else 200)
    p50, p95 = percentile(end_to_end, 50), percentile(end_to_end, 95)
    return [
        Figure("end-to-end recall p50 (embedding included), 100-memory user", p50, "ms", *check(p50, "<=", 20),
               "MiniLM embedding alone p50", percentile(embedding, 50)),
        Figure("end-to-end recall p95 (embedding included), 100-memory user", p95, "ms", *check(p95, "<=", 30),
               "MiniLM embedding alone p95", percentile(embedding, 95)),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    isolate()
    print(table(figures(scratch_runtime(), args.quick)))
    print(f"load average {load_average()}")


if __name__ == "__main__":
    main()

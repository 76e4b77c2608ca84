"""One message through several backends at once, each streaming into its own column.

Worker threads run `backend.turn`; their streamed text goes into a queue per backend and
the Streamlit main thread drains the queues into the columns' placeholders. Writing to
Streamlit only from the main thread avoids handing the script-run context to threads.
A backend that raises becomes a `TurnResult` with `error` set (short plain words; the
full error goes to the log without the user's text), so one failing column never stops
the others.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from backends.base import MemoryBackend, TurnContext, TurnResult
from backends.query_vector import with_query_vector
from chat.errors import log_error, plain_error
from embeddings import Embedder

POLL_SECONDS = 0.05
StreamUpdate = Callable[[str, str], None]
"""update(backend name, text so far), called on the main thread."""


def safe_turn(backend: MemoryBackend, context: TurnContext, on_text: Callable[[str], None]) -> TurnResult:
    started = time.perf_counter()
    try:
        return backend.turn(context, on_text=on_text)
    except Exception as error:  # noqa: BLE001 - becomes a message in this backend's column
        log_error(f"turn in {backend.name}", error, context.text)
        return TurnResult(
            backend=backend.name, reply="", model_label="", error=plain_error(error),
            timings={"total_ms": (time.perf_counter() - started) * 1000},
        )


def _drain(chunks: queue.Queue[str]) -> str:
    text = ""
    while True:
        try:
            text += chunks.get_nowait()
        except queue.Empty:
            return text


def run_parallel(
    backends: dict[str, MemoryBackend], context: TurnContext, update: StreamUpdate | None = None,
    embedder: Embedder | None = None,
) -> dict[str, TurnResult]:
    """Run the turn in every backend concurrently; returns results in the backends' order.

    With `embedder`, the message is embedded once here (TurnContext.query_vector) for the
    backends that recall by vector; the others start first, so the embedding overlaps
    their turns instead of delaying every column.
    """
    queues: dict[str, queue.Queue[str]] = {name: queue.Queue() for name in backends}
    streamed = {name: "" for name in backends}
    with ThreadPoolExecutor(max_workers=max(1, len(backends)), thread_name_prefix="lab-turn") as pool:
        def start(name: str, backend: MemoryBackend, turn_context: TurnContext) -> Future[TurnResult]:
            return pool.submit(safe_turn, backend, turn_context, queues[name].put)

        futures: dict[str, Future[TurnResult]] = {
            name: start(name, backend, context) for name, backend in backends.items()
            if embedder is None or not backend.recalls_by_vector
        }
        if len(futures) < len(backends):
            embedded = with_query_vector(context, embedder)
            futures.update({name: start(name, backend, embedded) for name, backend in backends.items() if name not in futures})
        futures = {name: futures[name] for name in backends}  # the backends' order
        while True:
            finished = all(future.done() for future in futures.values())
            for name, chunks in queues.items():
                new = _drain(chunks)
                if new:
                    streamed[name] += new
                    if update is not None:
                        update(name, streamed[name])
            if finished:
                break
            # Wake at once when a backend finishes (a plain sleep added up to POLL_SECONDS to
            # every turn's wall time), else every POLL_SECONDS to stream the text so far.
            wait([f for f in futures.values() if not f.done()], timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
    return {name: future.result() for name, future in futures.items()}

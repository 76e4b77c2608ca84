"""The last turn of every column in one table, under the columns.

Four metric tables inside four expanders make a person click and remember; one row per
backend with the same columns (notes in and cut, tokens, cache, latency, cost) puts the
comparison the lab exists for on one screen. Built only from `TurnResult`, so every
backend gets the same row and a new backend needs no change here.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from backends.base import TurnResult

COLUMNS = ("backend", "notes injected", "notes cut", "input tokens", "output tokens", "cache read", "cache write",
           "recall ms", "total ms", "cost (USD)", "status")


def comparison_row(label: str, result: TurnResult) -> dict[str, Any]:
    """One backend's last turn; the numbers are the turn's own (as the column's metrics show)."""
    usage, timings = result.usage, result.timings
    values = (label, len(result.recall.injected), len(result.recall.cut), usage.input_tokens, usage.output_tokens,
              usage.cache_read_tokens, usage.cache_write_tokens, round(timings.recall_ms), round(timings.total_ms),
              round(result.cost_usd, 5), f"error: {result.error}" if result.error else "ok")
    return dict(zip(COLUMNS, values))


def comparison_rows(results: dict[str, TurnResult], labels: dict[str, str]) -> list[dict[str, Any]]:
    """A row per backend that answered, in the columns' order."""
    return [comparison_row(labels.get(name, name), results[name]) for name in labels if name in results]


def render_comparison(results: dict[str, TurnResult], labels: dict[str, str]) -> None:
    rows = comparison_rows(results, labels)
    if not rows:
        return
    st.markdown("#### Last turn, side by side")
    st.dataframe(rows, hide_index=True, width="stretch")
    if all(result.cost_usd == 0 for result in results.values()):
        st.caption("Cost is 0 when the model is the offline one (or unpriced); with a priced model it is estimated "
                   "from llm/pricing.py, cache reads and writes included.")

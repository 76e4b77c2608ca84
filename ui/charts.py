"""The per-conversation chart: tokens and cache reads per turn for each backend, and the
request-path latency per turn, so the cost of each memory design is visible at a glance."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.session import Turn


def turn_series(turns: list[Turn], backend: str) -> dict[str, list]:
    """x = turn number; only turns where this backend answered."""
    series: dict[str, list] = {"turn": [], "input": [], "output": [], "cache_read": [], "total_ms": []}
    for number, turn in enumerate(turns, start=1):
        result = turn.results.get(backend)
        if result is None or result.error:
            continue
        series["turn"].append(number)
        series["input"].append(result.usage.input_tokens)
        series["output"].append(result.usage.output_tokens)
        series["cache_read"].append(result.usage.cache_read_tokens)
        series["total_ms"].append(round(result.timings.total_ms, 1))
    return series


def conversation_figure(turns: list[Turn], labels: dict[str, str]) -> go.Figure:
    """Row 1: input tokens (solid) and cache reads (dotted); row 2: total ms, per backend."""
    figure = make_subplots(
        rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
        subplot_titles=("Input tokens (solid) and cache reads (dotted) per turn", "Request-path latency per turn (ms)"),
    )
    for backend, label in labels.items():
        series = turn_series(turns, backend)
        if not series["turn"]:
            continue
        figure.add_trace(go.Scatter(x=series["turn"], y=series["input"], name=f"{label}: input", mode="lines+markers",
                                    legendgroup=backend), row=1, col=1)
        figure.add_trace(go.Scatter(x=series["turn"], y=series["cache_read"], name=f"{label}: cache read",
                                    mode="lines+markers", line={"dash": "dot"}, legendgroup=backend), row=1, col=1)
        figure.add_trace(go.Scatter(x=series["turn"], y=series["total_ms"], name=f"{label}: total ms",
                                    mode="lines+markers", legendgroup=backend), row=2, col=1)
    figure.update_xaxes(title_text="turn", dtick=1, row=2, col=1)
    figure.update_layout(height=520, margin={"l": 40, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return figure

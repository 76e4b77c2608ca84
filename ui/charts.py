"""The session chart: tokens and cache reads per turn for each backend, and the
request-path latency per turn, so the cost of each memory design is visible at a glance.

It follows the whole session with the user, across "New conversation": turn numbers keep
counting and a dotted line marks where each conversation starts, so a one-turn
conversation is a point on a line (and the cache falling back to 0 is visible), not a lone dot."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.session import Turn


def turn_series(turns: list[Turn], backend: str) -> dict[str, list]:
    """x = turn number in the session; only turns where this backend answered."""
    series: dict[str, list] = {"turn": [], "conversation": [], "input": [], "output": [], "cache_read": [], "total_ms": []}
    for number, turn in enumerate(turns, start=1):
        result = turn.results.get(backend)
        if result is None or result.error:
            continue
        series["turn"].append(number)
        series["conversation"].append(turn.conversation + 1)
        series["input"].append(result.usage.input_tokens)
        series["output"].append(result.usage.output_tokens)
        series["cache_read"].append(result.usage.cache_read_tokens)
        series["total_ms"].append(round(result.timings.total_ms, 1))
    return series


def conversation_starts(turns: list[Turn]) -> list[int]:
    """Session turn numbers where a new conversation begins (after the first)."""
    return [number for number, (before, turn) in enumerate(zip(turns, turns[1:]), start=2)
            if turn.conversation != before.conversation]


def conversation_figure(turns: list[Turn], labels: dict[str, str]) -> go.Figure:
    """Row 1: input tokens (solid) and cache reads (dotted); row 2: total ms, per backend;
    x = the session's turn number, every conversation of the session."""
    figure = make_subplots(
        rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
        subplot_titles=("Input tokens (solid) and cache reads (dotted) per turn of this session, across conversations",
                        "Request-path latency per turn (ms)"),
    )
    for backend, label in labels.items():
        series = turn_series(turns, backend)
        if not series["turn"]:
            continue
        traces = (("input", f"{label}: input", {}, 1), ("cache_read", f"{label}: cache read", {"dash": "dot"}, 1),
                  ("total_ms", f"{label}: total ms", {}, 2))
        for key, name, line, row in traces:
            figure.add_trace(go.Scatter(
                x=series["turn"], y=series[key], name=name, mode="lines+markers", line=line, legendgroup=backend,
                customdata=series["conversation"], hovertemplate="turn %{x} (conversation %{customdata}): %{y}",
            ), row=row, col=1)
    for number in conversation_starts(turns):
        figure.add_vline(x=number - 0.5, line_dash="dot", line_color="gray", row="all", col=1)
        figure.add_annotation(x=number - 0.5, y=1.0, yref="paper", text="new conversation", showarrow=False,
                              xanchor="left", font={"size": 10, "color": "gray"})
    figure.update_xaxes(title_text="turn", dtick=1, row=2, col=1)
    figure.update_layout(height=520, margin={"l": 40, "r": 20, "t": 40, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return figure

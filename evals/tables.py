"""Markdown tables for the eval commands' output (pasted as they are into the README)."""

from __future__ import annotations


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]

    def render(cells: list[str]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"

    return "\n".join([render(header), render(["-" * width for width in widths]), *map(render, rows)])

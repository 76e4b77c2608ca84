"""The lab's sliders, declared once: the settings, the sidebar and the evals read this table.

A knob's range and default live here and nowhere else, so a slider can never offer a
value the settings would reject, and an eval run "at default settings" means the lab's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field


@dataclass(frozen=True)
class KnobSpec:
    name: str
    label: str
    default: float | int
    low: float | int
    high: float | int
    step: float | int
    help: str
    slider_low: float | int | None = None
    """Where the slider starts, when the valid range is wider than a person needs."""

    @property
    def is_int(self) -> bool:
        return isinstance(self.default, int)


RECALL_CANDIDATES = 30
"""How many nearest memories recall scores; top_k above it could never be reached."""

KNOBS: tuple[KnobSpec, ...] = (
    KnobSpec("min_similarity", "MIN_SIMILARITY", 0.30, -1.0, 1.0, 0.01,
             "Similarity gate: a note scoring below it is not injected.", slider_low=0.0),
    KnobSpec("half_life_days", "Half-life (days)", 90.0, 1.0, 730.0, 1.0,
             "Recency decay of episodic memories (facts and rules do not decay)."),
    KnobSpec("max_memory_tokens", "Memory token budget", 600, 0, 4000, 50,
             "Token budget of the injected notes (a count says nothing about prompt cost)."),
    KnobSpec("top_k", "Top-k", 8, 1, RECALL_CANDIDATES, 1, "Notes at most."),
)
KNOB_SPECS: dict[str, KnobSpec] = {spec.name: spec for spec in KNOBS}


def knob_field(name: str) -> Any:
    """A pydantic field with the knob's default and range (used by Knobs and by the settings)."""
    spec = KNOB_SPECS[name]
    return Field(spec.default, ge=spec.low, le=spec.high, description=spec.help)


class Knobs(BaseModel):
    """The per-turn memory settings (the lab's sliders); they act on the next turn."""

    min_similarity: float = knob_field("min_similarity")
    half_life_days: float = knob_field("half_life_days")
    max_memory_tokens: int = knob_field("max_memory_tokens")
    top_k: int = knob_field("top_k")
    incognito: bool = False

    @classmethod
    def from_settings(cls, source: Any, **overrides: Any) -> "Knobs":
        """Knobs from any object with the knob attributes (the settings), plus overrides."""
        values = {spec.name: getattr(source, spec.name) for spec in KNOBS}
        return cls(**(values | overrides))

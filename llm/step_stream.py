"""Streaming the text of a multi-step exchange (tool rounds) as one reply."""

from __future__ import annotations

from core import TextCallback


class StepStream:
    """Forwards streamed text, with the same blank line between steps' texts that
    `Exchange.text` puts there, so what the lab streamed equals the reply it gets."""

    def __init__(self, on_text: TextCallback | None) -> None:
        self.on_text = on_text
        self.emitted = False
        self.step_started = False

    def new_step(self) -> None:
        self.step_started = False

    def __call__(self, chunk: str) -> None:
        if self.on_text is None or not chunk:
            return
        if self.emitted and not self.step_started:
            self.on_text("\n\n")
        self.step_started = self.emitted = True
        self.on_text(chunk)

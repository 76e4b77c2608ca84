"""One injectable clock for TTL, decay and sweeps.

Memory behaviour depends on time (expiry, recency decay, nightly sweeps). Reading the wall
clock directly would make those untestable without sleeping and would stop the lab from
demonstrating a TTL; so everything asks this clock, which can be advanced by N days.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone


class Clock:
    """Wall-clock time plus an offset that tests and the lab can advance."""

    def __init__(self, offset: timedelta = timedelta(0)) -> None:
        self._offset = offset
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + self._offset

    @property
    def offset(self) -> timedelta:
        return self._offset

    def advance(self, days: float = 0.0, seconds: float = 0.0) -> datetime:
        with self._lock:
            self._offset += timedelta(days=days, seconds=seconds)
        return self.now()

    def set_offset(self, offset: timedelta) -> None:
        with self._lock:
            self._offset = offset

    def reset(self) -> None:
        self.set_offset(timedelta(0))


clock = Clock()
"""The process-wide clock. Pass another Clock where isolation matters."""

"""The embedded database starts before the rest of the lab is imported.

A fresh data dir spends seconds in initdb, in a separate process; importing the lab's
modules (the SDKs, SQLAlchemy, Streamlit's widgets) spends seconds in this one. `app.py`
calls `begin()` first thing, so the two overlap instead of running one after the other.
The start (ui/resources.py) later joins the same server: `db.engine` keeps one per data
dir, behind a lock. Anything that fails here is retried, and reported, by that start.
"""

from __future__ import annotations

import threading

from db.engine import embedded_server_url
from settings import SettingsError, get_settings

_thread: threading.Thread | None = None
_lock = threading.Lock()


def _start_server() -> None:
    try:
        embedded_server_url(get_settings().data_dir)
    except Exception:  # noqa: BLE001 - the real start retries it and shows the error in one line
        pass


def begin() -> None:
    """Start the embedded server in a background thread (once per process; none with DATABASE_URL)."""
    global _thread
    with _lock:
        if _thread is not None:
            return
        try:
            external = get_settings().database_url is not None
        except SettingsError:
            return  # the page says what to fix
        _thread = threading.Thread(target=_start_server, name="lab-prestart-db", daemon=True)
        if not external:
            _thread.start()

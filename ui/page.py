"""What every page of the lab does first: configure the page, start the process-wide
resources (one readable line on a configuration error), pick the user, load the backends."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from backends.base import MemoryBackend
from chat.errors import log_error, plain_error
from runtime import Runtime
from settings import SettingsError
from ui import resources, session, sidebar


@dataclass
class PageContext:
    runtime: Runtime
    user_id: str
    names: list[str]
    backends: dict[str, MemoryBackend]
    failed: dict[str, str]
    labels: dict[str, str]


def start_or_stop() -> Runtime:
    """The runtime, or a one-line error and the end of this run."""
    try:
        return resources.start()
    except SettingsError as error:
        st.error(f"Configuration problem: {error}")
    except Exception as error:  # noqa: BLE001 - one readable line instead of a traceback
        log_error("starting the lab", error)
        st.error(f"The lab could not start: {plain_error(error)}")
    st.stop()
    raise AssertionError("unreachable")  # st.stop() raises


def open_page(title: str, caption: str, icon: str = "🧠") -> PageContext:
    st.set_page_config(page_title=f"{title} · Memory Lab", page_icon=icon, layout="wide")
    session.keep_widget_state()
    st.title(title)
    st.caption(caption)
    runtime = start_or_stop()
    user_id = sidebar.user_picker(runtime)
    names = resources.available_backends()
    backends, failed = resources.load_backends(names)
    labels = {name: backends[name].label if name in backends else name for name in names}
    return PageContext(runtime, user_id, names, backends, failed, labels)

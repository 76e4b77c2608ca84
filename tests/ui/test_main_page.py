"""The main page's flows, run in-process by AppTest against the real embedded Postgres and
the offline model."""

from __future__ import annotations

from backends.registry import backend_names


def texts(elements) -> list[str]:
    return [element.value for element in elements]


def test_message_gets_a_reply_in_every_enabled_column(lab):
    lab.chat_input[0].set_value("Hello there, I live in Lisbon.").run()
    assert not lab.exception, lab.exception
    names = backend_names()
    assert len(lab.columns) >= len(names)
    replies = [text for text in texts(lab.markdown) if "offline model" in text.lower() or text.startswith("[offline")]
    assert len(replies) == len(names), texts(lab.markdown)
    labels = [caption for caption in texts(lab.caption) if caption.startswith("Model: ")]
    assert labels == ["Model: offline model (rule-based)"] * len(names)
    assert len(lab.expander) == len(names)
    assert all(expander.label.startswith("What ") for expander in lab.expander)

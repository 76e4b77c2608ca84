"""User ids: validated and normalised once, where a turn or a request enters the lab.

The id ends up in every WHERE clause and memory-file path, so only a short slug passes;
the error echoes a short form, never a pasted 10,000-character name.
"""

from __future__ import annotations

import re

USER_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
ECHO_CHARS = 40


class InvalidUserId(ValueError):
    """A user id that is not a short slug."""


class UserErased(LookupError):
    """The user's data was erased: a late write (a turn in flight, a queued job) must not
    bring them back. Its message names no user and quotes no text."""

    def __init__(self) -> None:
        super().__init__("This user's data was deleted, so this turn was not saved. Pick or create a user to go on.")


def _short(raw: str) -> str:
    shown = raw if len(raw) <= ECHO_CHARS else raw[:ECHO_CHARS] + f"... ({len(raw)} characters)"
    return repr(shown)


def normalise_user_id(raw: str) -> str:
    user_id = str(raw).strip().lower().replace(" ", "-")
    if not USER_ID_PATTERN.match(user_id):
        raise InvalidUserId(
            f"User name {_short(str(raw))} is not allowed: use 1-64 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit."
        )
    return user_id

"""Errors as a person reads them, and as the log keeps them.

A turn that fails shows one short sentence in its column: what happened and what to do,
never the SQL, its parameters (which hold the user's own text), a driver message with the
database's socket path, or a pasted 10,000-character value. The full error goes to the log
instead, with the statement but without its parameters, and with the user's message
replaced by its length, so the log never becomes another copy of what the user typed.

A small mapper by exception class rather than message parsing: drivers word their errors
differently, but SQLAlchemy sorts them into the same few classes for every driver.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterator

from pydantic import ValidationError
from sqlalchemy import exc as sa_exc

from core.user_ids import InvalidUserId
from llm.chat_model import LLMError

log = logging.getLogger("lab.errors")
MAX_SHOWN_CHARS = 240
MAX_STORED_CHARS = 1000
_SQL_TAIL = re.compile(r"\s*\[(?:SQL|parameters|Background on this error)[:\s].*", re.S)
_PATH = re.compile(r"(?:/[\w.@%+-]+){2,}/?")

DATABASE_DOWN = "The database is not reachable right now, so nothing was saved. Try again in a moment."
CONFLICT = ("This turn collided with another change to the same data (for example the user was deleted "
            "meanwhile), so nothing was saved. Send the message again.")
BAD_DATA = "The database could not store this text, so nothing was saved. Remove unusual characters and send it again."
DATABASE_ERROR = "A database error stopped this turn, so nothing was saved. Try again; the details are in the server log."


def _chain(error: BaseException) -> Iterator[BaseException]:
    """The error and what caused it (a library may wrap the driver's error in its own)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _is_connection_error(error: BaseException) -> bool:
    if isinstance(error, (sa_exc.OperationalError, sa_exc.InterfaceError)):
        return True
    if isinstance(error, sa_exc.DBAPIError) and error.connection_invalidated:
        return True
    module = type(error).__module__
    # psycopg's own OperationalError/InterfaceError and psycopg_pool's PoolTimeout, raised
    # outside SQLAlchemy (Mem0 talks to Postgres through psycopg_pool directly).
    return module.startswith(("psycopg", "psycopg_pool")) and type(error).__name__ in (
        "OperationalError", "InterfaceError", "PoolTimeout", "PoolClosed", "TooManyRequests")


def _shorten(text: str) -> str:
    """One line, no SQL tail, no filesystem paths, capped."""
    text = _PATH.sub("<path>", _SQL_TAIL.sub("", text)).strip()
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS - 3] + "..."


def _validation_message(error: ValidationError) -> str:
    messages = [str(item.get("msg", "")).removeprefix("Value error, ") for item in error.errors(include_url=False)]
    return " ".join(messages) or "The input was not accepted."


def plain_error(error: BaseException) -> str:
    """One short sentence for a person, by what kind of failure this is."""
    chain = list(_chain(error))
    if isinstance(error, (LLMError, InvalidUserId)):
        return _shorten(str(error))
    if isinstance(error, ValidationError):
        return _shorten(_validation_message(error))
    if any(_is_connection_error(item) for item in chain):
        return DATABASE_DOWN
    if any(isinstance(item, sa_exc.IntegrityError) for item in chain):
        return CONFLICT
    if any(isinstance(item, (sa_exc.DataError, UnicodeError)) for item in chain):
        return BAD_DATA
    if any(isinstance(item, sa_exc.SQLAlchemyError) for item in chain):
        return DATABASE_ERROR
    return _shorten(f"This backend failed: {type(error).__name__}: {error}")


def error_summary(error: BaseException) -> str:
    """"Type: short message" for a stored error a person reads later (a job's last error on
    the Jobs page): the exception's class for the operator, the plain sentence for database
    errors (whose text carries the SQL parameters, i.e. the user's words), the message
    otherwise, shortened and without paths."""
    chain = list(_chain(error))
    if any(isinstance(item, sa_exc.SQLAlchemyError) or _is_connection_error(item) for item in chain):
        return f"{type(error).__name__}: {plain_error(error)}"
    text = _PATH.sub("<path>", _SQL_TAIL.sub("", f"{type(error).__name__}: {error}"))
    return text if len(text) <= MAX_STORED_CHARS else text[:MAX_STORED_CHARS - 3] + "..."


def _describe(error: BaseException) -> str:
    """The error for the log: every cause, SQL without its parameters, the driver's primary
    message only (its DETAIL line quotes row values), a validation error without the input."""
    parts: list[str] = []
    described: set[int] = set()
    for item in _chain(error):
        if id(item) in described:
            continue
        if isinstance(item, sa_exc.StatementError):
            orig = item.orig
            described.add(id(orig))
            primary = getattr(getattr(orig, "diag", None), "message_primary", None) or str(orig).split("\n")[0]
            code = getattr(orig, "sqlstate", None) or item.code or ""
            statement = " ".join(str(item.statement or "").split())[:2000]
            parts.append(f"{type(item).__name__} [{code}] {type(orig).__name__}: {primary} | SQL: {statement}")
        elif isinstance(item, ValidationError):
            parts.append(f"ValidationError: {_validation_message(item)}")
        else:
            parts.append(f"{type(item).__name__}: {str(item).splitlines()[0][:500] if str(item) else ''}")
    return " <- ".join(parts)


def log_error(where: str, error: BaseException, user_text: str | None = None) -> None:
    """Log the full error and its stack, with the user's message replaced by its length."""
    described = _describe(error)
    stack = "".join(traceback.format_tb(error.__traceback__))
    if user_text:
        for text in {user_text, user_text.strip()} - {""}:
            described = described.replace(text, f"<the user's message, {len(user_text)} chars>")
    log.error("%s failed: %s\n%s", where, described, stack.rstrip())

"""Tombstones of erased users: a late write checks them, so "Delete all my data" stays done.

Why a tombstone at all: a turn in flight when the user is erased (another column still
answering, a stale browser tab) would otherwise re-create the `users` row and store its
messages after the erasure reported success. Every write path for a user checks the
tombstone or the `users` row under a lock (see `chat.store`), and erasure writes the
tombstone first, before it deletes anything.

Why a keyed hash (HMAC-SHA256) and not the id: the tombstone outlives the user's data, so
in clear it would be a list of who asked to be erased; a plain hash of a short name is
reversed by hashing guesses. With the key outside the database (ERASURE_KEY, or a key file
in the data dir, mode 0600), a database dump or backup alone tells nobody whether "alice"
was ever here, while the lab can still answer "is this id erased?".
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
import time
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, delete, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import Session

from core.user_ids import UserErased
from db.models import ErasedUser
from settings import Settings

KEY_FILE = "erasure.key"


def _key_from_file(path: Path) -> bytes:
    """Read the key file, creating it (atomically, once, even with several processes) if missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(100):  # another process created it a moment ago and is writing it
            written = path.read_text().strip()
            if written:
                return bytes.fromhex(written)
            time.sleep(0.01)
        raise RuntimeError(f"{path} is empty: delete it and start again") from None
    key = secrets.token_bytes(32)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(key.hex())
    return key


@functools.lru_cache(maxsize=8)
def _file_key(data_dir: Path) -> bytes:
    return _key_from_file(data_dir / KEY_FILE)


def lock_user(session: Session, user_id: str) -> None:
    """Hold the users row (FOR KEY SHARE) for the rest of the transaction, or raise UserErased.

    Why: erasure deletes the users row last, so a write that holds this lock either commits
    before that DELETE (which then waits and cascades over it) or finds the row gone and
    writes nothing; it never stores rows for a user after the erasure reported success."""
    found = session.execute(text("SELECT 1 FROM users WHERE id = :id FOR KEY SHARE"), {"id": user_id}).first()
    if found is None:
        raise UserErased()


class Tombstones:
    """Record and check erased users by keyed hash."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def key_for(self, user_id: str) -> str:
        return hmac.new(self._key, user_id.encode(), hashlib.sha256).hexdigest()

    def is_erased(self, connection: Connection, user_id: str) -> bool:
        return connection.execute(select(ErasedUser.key).where(ErasedUser.key == self.key_for(user_id))).first() is not None

    def record(self, connection: Connection, user_id: str, now: datetime) -> None:
        connection.execute(insert(ErasedUser).values(key=self.key_for(user_id), erased_at=now)
                           .on_conflict_do_update(index_elements=["key"], set_={"erased_at": now}))

    def lift(self, connection: Connection, user_id: str) -> None:
        """A deliberate re-creation of the same name (the lab's "Create user") starts afresh."""
        connection.execute(delete(ErasedUser).where(ErasedUser.key == self.key_for(user_id)))


def tombstones_for(settings: Settings) -> Tombstones:
    if settings.erasure_key is not None:
        return Tombstones(settings.erasure_key.get_secret_value().encode())
    return Tombstones(_file_key(settings.data_dir.resolve()))

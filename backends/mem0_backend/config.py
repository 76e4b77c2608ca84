"""Mem0's configuration dict, built from the lab's settings and runtime (never by hand).

LLM: Anthropic (the real API, or the offline model through its base URL) or Mem0's openai
provider; embedder: a placeholder the store swaps for the lab's own (one model per process); vector store:
Mem0's pgvector store on OUR database; history: a SQLite file inside the data dir.
"""

from __future__ import annotations

from typing import Any

import psycopg.conninfo
from psycopg_pool import ConnectionPool
from sqlalchemy import Engine

from backends.mem0_backend.library import mem0_dir
from settings import Settings

COLLECTION = "mem0_memories"

CUSTOM_PLANS = "-c plan_cache_mode=force_custom_plan"
"""Mem0 filters with `payload->>%s = %s` (the key is a parameter too). Only a custom plan
sees 'user_id' as a constant and can match our expression index on payload->>'user_id';
a cached generic plan (psycopg prepares a statement after 5 runs) could fall back to a
sequential scan. So every Mem0 connection plans each query with its real parameters."""


def connection_string(engine: Engine, options: str = CUSTOM_PLANS) -> str:
    """libpq keyword conninfo for our database, as Mem0's psycopg3 pool expects.

    The embedded server listens on a Unix socket (`?host=/path` in the URL): libpq takes
    that as-is, but a URI would mangle `options` (it does not decode '+'), so the URL is
    turned into keyword form with `options` added by psycopg's own helper.
    """
    url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    return psycopg.conninfo.make_conninfo(url, options=options) if options else url


POOL_MAX_SIZE = 5
"""Mem0's own default pool size (`maxconn`)."""
POOL_TIMEOUT_SECONDS = 10.0
"""How long a Mem0 call waits for a connection (psycopg's default is 30 s): with the database
down, the column says so in seconds instead of hanging half a minute."""


def checked_pool(conninfo: str) -> ConnectionPool:
    """The pool Mem0's pgvector store uses, handed in through its `connection_pool` setting.

    Why not Mem0's own: it builds a psycopg pool that never checks a connection before
    handing it out, so after the database restarts, every pooled connection is dead and
    Mem0's next 1-2 calls fail with "the connection is lost". `check_connection` is psycopg's
    pre-ping: a dead connection is discarded and replaced before Mem0 sees it.
    """
    return ConnectionPool(conninfo=conninfo, min_size=1, max_size=POOL_MAX_SIZE,
                          check=ConnectionPool.check_connection, open=True, name="mem0", timeout=POOL_TIMEOUT_SECONDS)


def llm_config(settings: Settings) -> dict[str, Any]:
    if settings.resolved_provider == "openai":
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused"
        return {"provider": "openai", "config": {"model": settings.extraction_model, "api_key": key,
                                                 "openai_base_url": settings.openai_base_url}}
    from llm.provider import anthropic_base_url  # starts the offline model when offline

    key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else "offline"
    # The anthropic SDK we pin (2.16) no longer takes `temperature`; Mem0 sends it for
    # haiku-named models unless told not to.
    return {"provider": "anthropic", "config": {"model": settings.extraction_model, "api_key": key,
                                                "anthropic_base_url": anthropic_base_url(settings),
                                                "enable_sampling_parameters": False}}


PLACEHOLDER_EMBEDDER_URL = "http://127.0.0.1:9/replaced-by-the-lab-embedder"
"""Loopback's discard port: if the placeholder were ever called it would fail at once, locally."""


def embedder_config(dimension: int) -> dict[str, Any]:
    """A placeholder that costs nothing to build: the store replaces it with the lab's embedder.

    `Memory.__init__` builds an embedder from this entry before we can hand it ours; a
    `huggingface` entry would load a second copy of MiniLM (seconds, about 90 MB) only for
    it to be replaced. Mem0's `openai` client is built without any request, and the store
    sets `memory.embedding_model` to `LabEmbedding` right after (backends/mem0_backend/embedder.py),
    so the vectors come from the same model as the custom pipeline's, local or OpenAI.
    """
    return {"provider": "openai", "config": {"api_key": "unused", "openai_base_url": PLACEHOLDER_EMBEDDER_URL,
                                             "embedding_dims": dimension}}


def history_db_path(settings: Settings) -> str:
    return str(mem0_dir(settings) / "history.db")


def mem0_config(settings: Settings, engine: Engine, dimension: int, collection: str = COLLECTION,
                default_index: bool = False) -> dict[str, Any]:
    """The dict for `Memory.from_config`. `default_index` keeps Mem0's stock HNSW index."""
    conninfo = connection_string(engine, options="" if default_index else CUSTOM_PLANS)
    return {
        "vector_store": {"provider": "pgvector", "config": {
            # the stock mode is Mem0 as shipped, session settings included
            "connection_string": conninfo,
            "connection_pool": checked_pool(conninfo),  # takes precedence over the string
            "collection_name": collection,
            "embedding_model_dims": dimension,  # Mem0 does not take it from the embedder
            "hnsw": default_index,
            "diskann": False,
        }},
        "llm": llm_config(settings),
        "embedder": embedder_config(dimension),
        "history_db_path": history_db_path(settings),
    }

"""The HTTP server: Starlette app + uvicorn in a daemon thread on 127.0.0.1 at an ephemeral port.

Why a real server (not an httpx mock transport): the app, Mem0's adapter and subprocesses (the
Streamlit lab, worker processes) all create their own ``anthropic.Anthropic`` clients; a loopback
URL is the one thing they can all be given (``base_url`` / ``anthropic_base_url``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import threading
import time
from typing import Any, Callable, Optional

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from . import engine, streaming
from .cache import DEFAULT_MIN_CACHEABLE_TOKENS, PromptCache
from .faults import FAULT_HEADER, Fault, FaultConfig
from .protocol import ApiError, invalid, parse_request
from .threads import ThreadStore, error_body


class OfflineModelServer:
    """One emulator instance: its cache, fault schedule and (once started) its URL.

    ``min_cache_tokens``: minimum cacheable prefix (default 1024 like the real API).
    ``clock``: time source of the prompt cache (tests inject a fake clock to expire entries).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 min_cache_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
                 clock: Callable[[], float] = time.monotonic):
        self.host = host
        self.requested_port = port
        self.cache = PromptCache(min_tokens=min_cache_tokens, clock=clock)
        self.faults = FaultConfig()
        self.threads = ThreadStore()
        self.port: Optional[int] = None
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()
        self._server: Optional[uvicorn.Server] = None
        self._thread: Optional[threading.Thread] = None
        self.app = self._build_app()

    # -- configuration -------------------------------------------------------------------
    @property
    def min_cache_tokens(self) -> int:
        return self.cache.min_tokens

    @min_cache_tokens.setter
    def min_cache_tokens(self, value: int) -> None:
        self.cache.min_tokens = value

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("server not started")
        return f"http://{self.host}:{self.port}"

    # -- HTTP ------------------------------------------------------------------------------
    def _build_app(self) -> Starlette:
        return Starlette(routes=[
            Route("/v1/messages", self._messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", self._count_tokens, methods=["POST"]),
            Route("/health", self._health, methods=["GET"]),
        ])

    async def _health(self, request: HttpRequest) -> Response:
        return JSONResponse({"ok": True, "model": "offline model (rule-based)"})

    def _next_id(self) -> str:
        with self._ids_lock:
            return f"msg_offline_{next(self._ids):06d}"

    @staticmethod
    def _error(err: ApiError) -> Response:
        return JSONResponse(error_body(err), status_code=err.status, headers=err.headers)

    @staticmethod
    async def _body(request: HttpRequest) -> Any:
        raw = await request.body()
        try:
            return json.loads(raw or b"null")
        except ValueError:
            raise invalid("The request body is not valid JSON.")

    async def _count_tokens(self, request: HttpRequest) -> Response:
        try:
            body, _ = self.threads.expand(await self._body(request))
            req = parse_request(body, dict(request.headers), count_only=True)
        except ApiError as err:
            return self._error(err)
        return JSONResponse({"input_tokens": req.input_tokens_total()})

    async def _messages(self, request: HttpRequest) -> Response:
        try:
            header = request.headers.get(FAULT_HEADER)
            try:
                fault = Fault.parse(header) if header else self.faults.take()
            except ValueError as exc:
                raise invalid(str(exc))
            if fault is not None:
                if fault.name == "rate_limit":
                    raise ApiError(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit (offline fault injection).",
                                   {"retry-after": str(fault.retry_after)})
                if fault.name == "overloaded":
                    raise ApiError(529, "overloaded_error", "Overloaded (offline fault injection).")
                if fault.name == "server_error":
                    raise ApiError(500, "api_error", "Internal server error (offline fault injection).")
                if fault.name == "timeout":
                    await asyncio.sleep(fault.seconds)
            body, keep = self.threads.expand(await self._body(request))
            req = parse_request(body, dict(request.headers))
            reply = engine.respond(req)
            if fault is not None and fault.name == "max_tokens":
                reply = engine.truncate(reply, req.max_tokens, force_half=True)
            elif fault is not None and fault.name == "malformed_json":
                reply = engine.malformed(reply)
            else:
                reply = engine.truncate(reply, req.max_tokens)
            usage = self.cache.account(req)
        except ApiError as err:
            return self._error(err)
        message = {
            "id": self._next_id(),
            "type": "message",
            "role": "assistant",
            "model": req.model,
            "content": reply.content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
                "output_tokens": reply.output_tokens(),
            },
        }
        if keep:
            self.threads.store(message["id"], body, message)
        headers = {"request-id": "req_" + message["id"]}
        if req.stream:
            return StreamingResponse(streaming.events(message), media_type="text/event-stream", headers=headers)
        return JSONResponse(message, headers=headers)

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> "OfflineModelServer":
        """Bind the socket ourselves (so the port is known), then serve in a daemon thread."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.requested_port))
        sock.listen(128)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False,
                                timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name=f"offline-model-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("offline model server failed to start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Ask uvicorn to exit and wait briefly for the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> "OfflineModelServer":
        return self if self.port is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_offline_model(*, host: str = "127.0.0.1", port: int = 0,
                        min_cache_tokens: int = DEFAULT_MIN_CACHEABLE_TOKENS,
                        clock: Callable[[], float] = time.monotonic) -> OfflineModelServer:
    """Start a new emulator on ``host`` at ``port`` (0: ephemeral) and return it (``.base_url``, ``.stop()``)."""
    return OfflineModelServer(host, port, min_cache_tokens=min_cache_tokens, clock=clock).start()


_singleton: Optional[OfflineModelServer] = None
_singleton_lock = threading.Lock()


def ensure_running(min_cache_tokens: Optional[int] = None) -> OfflineModelServer:
    """The process-wide emulator, started on first use with ``min_cache_tokens`` (the app
    passes its setting), else ``OFFLINE_MODEL_MIN_CACHE_TOKENS`` if set, else the default."""
    global _singleton
    with _singleton_lock:
        if _singleton is None or _singleton._thread is None or not _singleton._thread.is_alive():
            min_tokens = min_cache_tokens if min_cache_tokens is not None else int(
                os.environ.get("OFFLINE_MODEL_MIN_CACHE_TOKENS", DEFAULT_MIN_CACHEABLE_TOKENS))
            _singleton = start_offline_model(min_cache_tokens=min_tokens)
        return _singleton

"""``python -m offline_model --port N``: run the emulator in the foreground (for a separate process)."""

from __future__ import annotations

import argparse

import uvicorn

from .cache import DEFAULT_MIN_CACHEABLE_TOKENS
from .server import OfflineModelServer


def main() -> None:
    parser = argparse.ArgumentParser(description="Offline model: rule-based Anthropic Messages API emulator")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--min-cache-tokens", type=int, default=DEFAULT_MIN_CACHEABLE_TOKENS)
    args = parser.parse_args()
    server = OfflineModelServer(args.host, args.port, min_cache_tokens=args.min_cache_tokens)
    print(f"offline model (rule-based) on http://{args.host}:{args.port}", flush=True)
    uvicorn.run(server.app, host=args.host, port=args.port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()

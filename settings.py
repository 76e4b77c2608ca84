"""The lab's one typed settings object.

Every knob is read here, from the environment or an optional `.env`, and nowhere else:
a newcomer finds every setting in one file, and a bad value fails once, at start, with a
one-line message instead of a traceback deep in a backend.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.knobs import Knobs, knob_field

REPO_ROOT = Path(__file__).resolve().parent

Provider = Literal["anthropic", "openai", "offline"]
EmbedderName = Literal["local", "openai"]
ExtractWhen = Literal["turn", "session"]


class SettingsError(Exception):
    """A configuration mistake, phrased as one line that says what to change."""


class Settings(BaseSettings):
    """Environment variables (case-insensitive) with defaults that run fully offline."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # Storage
    database_url: str | None = Field(None, description="Any Postgres with pgvector >= 0.8; default: embedded server")
    data_dir: Path = Field(REPO_ROOT / ".data", description="Embedded database, Mem0 history, logs")
    eval_data_dir: Path | None = Field(
        None, description="Where evals and benchmarks keep their own data (kept); default: a temp dir removed at exit")
    eval_database_url: str | None = Field(
        None, description="A Postgres of their own for evals and benchmarks; default: an embedded one in their data dir")

    # LLM
    llm_provider: Provider | None = Field(None, description="anthropic | openai | offline; default: anthropic if a key is set")
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = Field(None, description="Any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp)")
    chat_model: str = "claude-sonnet-5-5"
    extraction_model: str = "claude-haiku-5-5"
    llm_timeout_seconds: float = Field(60.0, gt=0)
    llm_max_retries: int = Field(2, ge=0, description="SDK retries of 429/5xx/timeouts within one call (every client, Mem0's too)")

    erasure_key: SecretStr | None = Field(None, description="Key of the erased-users tombstones' hash; default: a key file in DATA_DIR. Set it (the same everywhere) when several machines share DATABASE_URL")

    # Embeddings
    embedder: EmbedderName = "local"
    openai_embedding_model: str = "text-embedding-3-small"
    embedder_threads: int = Field(1, ge=1, description="torch threads for local MiniLM (1: steady latency on 2 shared cores)")

    # Memory knobs (the lab's sliders start from these; ranges and defaults: core/knobs.py)
    min_similarity: float = knob_field("min_similarity")
    half_life_days: float = knob_field("half_life_days")
    max_memory_tokens: int = knob_field("max_memory_tokens")
    top_k: int = knob_field("top_k")
    importance_weight: float = Field(0.15, ge=0)
    extract_when: ExtractWhen = "turn"
    session_idle_minutes: float = Field(30.0, gt=0)
    history_token_budget: int = Field(6000, ge=200)

    # Background work
    job_max_attempts: int = Field(5, ge=1)
    job_lease_seconds: float = Field(120.0, gt=0)
    job_poll_seconds: float = Field(2.0, gt=0)
    sweep_cron_hour: int = Field(3, ge=0, le=23)

    # Backends
    mem0_default_index: bool = Field(False, description="Reproduce Mem0's stock HNSW filtered-search shortfall")
    memory_file_ttl_days: float = Field(180.0, gt=0)
    agent_max_iterations: int = Field(12, ge=1)

    # Offline model
    offline_min_cache_tokens: int = Field(1024, ge=0)

    @model_validator(mode="after")
    def _provider_has_credentials(self) -> "Settings":
        provider = self.resolved_provider
        if provider == "anthropic" and self.anthropic_api_key is None:
            raise ValueError("LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY (or set LLM_PROVIDER=offline)")
        if provider == "openai" and self.openai_base_url is None and self.openai_api_key is None:
            raise ValueError("LLM_PROVIDER=openai needs OPENAI_API_KEY or OPENAI_BASE_URL (e.g. an Ollama URL)")
        if self.embedder == "openai" and self.openai_api_key is None and self.openai_base_url is None:
            raise ValueError("EMBEDDER=openai needs OPENAI_API_KEY or OPENAI_BASE_URL (or set EMBEDDER=local)")
        return self

    @model_validator(mode="after")
    def _evals_keep_off_the_lab_data(self) -> "Settings":
        """Evals and benchmarks create throwaway users by the thousand: never in the lab's store."""
        if self.eval_data_dir is not None and self.eval_data_dir.resolve() == self.data_dir.resolve():
            raise ValueError("EVAL_DATA_DIR must not be the lab's DATA_DIR: evals would fill the lab's user picker")
        if self.eval_database_url is not None and self.eval_database_url == self.database_url:
            raise ValueError("EVAL_DATABASE_URL must not be the lab's DATABASE_URL: evals would fill the lab's user picker")
        return self

    @property
    def resolved_provider(self) -> Provider:
        """Anthropic when a key is present, else the offline model: the lab always runs."""
        if self.llm_provider is not None:
            return self.llm_provider
        return "anthropic" if self.anthropic_api_key is not None else "offline"

    def knobs(self, **overrides: object) -> Knobs:
        """The sliders' starting values (what "default settings" means for the evals)."""
        return Knobs.from_settings(self, **overrides)

    @property
    def is_offline(self) -> bool:
        return self.resolved_provider == "offline"

    def public_summary(self) -> dict[str, str]:
        """What the UI may show: never a secret, only whether one is set."""
        return {
            "provider": self.resolved_provider,
            "chat_model": "offline model (rule-based)" if self.is_offline else self.chat_model,
            "extraction_model": "offline model (rule-based)" if self.is_offline else self.extraction_model,
            "embedder": self.embedder,
            "database": "embedded" if self.database_url is None else "DATABASE_URL",
            "anthropic_api_key": "set" if self.anthropic_api_key else "not set",
        }


def _one_line(error: ValidationError) -> str:
    """Turn pydantic's multi-line report into the single line a person acts on."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]).upper()
    message = first["msg"].removeprefix("Value error, ")
    if field and first["type"] != "value_error":
        return f"Invalid setting {field}: {message} (got {first.get('input')!r})"
    return f"Invalid settings: {message}"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment plus overrides; raise SettingsError, never a traceback."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        raise SettingsError(_one_line(error)) from None


@functools.lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()

"""Prompt cache over a 15-turn append-only conversation, and fault injection surfacing as SDK errors."""

from __future__ import annotations

import anthropic
import pytest

MODEL = "claude-offline-test"
MID_BETA = "mid-conversation-system-clear-at-2026-08-21"
# ~1,400 tokens under the documented approximation (chars/4): above the default 1024 minimum.
LONG_SYSTEM = "You are a helpful assistant for the Memory Lab. " * 120


def _client(srv) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="offline", base_url=srv.base_url, max_retries=0)


def test_append_only_conversation_cache_reads_grow(cache_server):
    client = _client(cache_server)
    messages: list[dict] = []
    reads, creations = [], []
    for turn in range(15):
        messages.append({"role": "user", "content": f"Turn {turn}: tell me about topic number {turn}."})
        messages.append({"role": "system", "content": f"<memory_notes>\n- [2026-12-01] (semantic) Note {turn}.\n</memory_notes>",
                         "clear_at": "next_user_message"})
        msg = client.beta.messages.create(model=MODEL, max_tokens=200, system=LONG_SYSTEM, messages=messages,
                                          cache_control={"type": "ephemeral"}, betas=[MID_BETA])
        u = msg.usage
        total = client.beta.messages.count_tokens(model=MODEL, system=LONG_SYSTEM, messages=messages,
                                                  betas=[MID_BETA]).input_tokens
        assert u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens == total
        reads.append(u.cache_read_input_tokens)
        creations.append(u.cache_creation_input_tokens)
        messages.append({"role": "assistant", "content": msg.content[0].text})
    assert reads[0] == 0 and creations[0] > 1024
    assert all(b > a for a, b in zip(reads[1:], reads[2:])) and reads[1] > 1024
    assert all(c > 0 for c in creations)  # each turn writes the new tail


def test_notes_in_system_prompt_never_hit(cache_server):
    client = _client(cache_server)
    messages: list[dict] = []
    for turn in range(15):
        messages.append({"role": "user", "content": f"Turn {turn}: tell me more."})
        system = LONG_SYSTEM + f"\n<memory_notes>\n- [2026-12-01] (semantic) Note {turn}.\n</memory_notes>"
        msg = client.messages.create(model=MODEL, max_tokens=200, system=system, messages=messages,
                                     cache_control={"type": "ephemeral"})
        assert msg.usage.cache_read_input_tokens == 0
        assert msg.usage.cache_creation_input_tokens > 1024
        messages.append({"role": "assistant", "content": msg.content[0].text})


def test_cache_minimum_and_expiry(cache_server, clock):
    client = _client(cache_server)
    kwargs = dict(model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "short"}],
                  cache_control={"type": "ephemeral"})
    assert client.messages.create(**kwargs).usage.cache_creation_input_tokens == 0  # below 1024 tokens
    cache_server.min_cache_tokens = 1
    first = client.messages.create(**kwargs).usage
    assert first.cache_creation_input_tokens > 0 and first.cache_read_input_tokens == 0
    clock.now += 299  # within 5 minutes: hit (and refresh)
    assert client.messages.create(**kwargs).usage.cache_read_input_tokens == first.cache_creation_input_tokens
    clock.now += 299  # refreshed on the hit, so still alive
    assert client.messages.create(**kwargs).usage.cache_read_input_tokens > 0
    clock.now += 301  # expired
    assert client.messages.create(**kwargs).usage.cache_read_input_tokens == 0


def test_block_level_breakpoint(cache_server):
    client = _client(cache_server)
    system = [{"type": "text", "text": LONG_SYSTEM, "cache_control": {"type": "ephemeral"}}]
    a = client.messages.create(model=MODEL, max_tokens=50, system=system, messages=[{"role": "user", "content": "one"}]).usage
    b = client.messages.create(model=MODEL, max_tokens=50, system=system, messages=[{"role": "user", "content": "another"}]).usage
    assert a.cache_creation_input_tokens > 1024 and a.cache_read_input_tokens == 0
    assert b.cache_read_input_tokens == a.cache_creation_input_tokens and b.cache_creation_input_tokens == 0
    assert b.input_tokens > 0


def test_rate_limit_fault_header(client):
    with pytest.raises(anthropic.RateLimitError) as exc:
        client.messages.create(model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}],
                               extra_headers={"x-offline-fault": "rate_limit;retry_after=3"})
    assert exc.value.response.headers["retry-after"] == "3"
    assert exc.value.body["error"]["type"] == "rate_limit_error"


def test_overloaded_then_sdk_retry_recovers(server):
    server.faults.inject("overloaded", times=1)
    with pytest.raises(anthropic.APIStatusError) as exc:
        _client(server).messages.create(model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}])
    assert exc.value.status_code == 529 and exc.value.body["error"]["type"] == "overloaded_error"
    server.faults.inject("overloaded", times=1)
    retrying = anthropic.Anthropic(api_key="offline", base_url=server.base_url, max_retries=2)
    msg = retrying.with_options(timeout=10).messages.create(model=MODEL, max_tokens=50,
                                                            messages=[{"role": "user", "content": "hi"}])
    assert msg.stop_reason == "end_turn"


def test_timeout_fault(client):
    with pytest.raises(anthropic.APITimeoutError):
        client.with_options(timeout=0.3).messages.create(
            model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}],
            extra_headers={"x-offline-fault": "timeout;seconds=1.5"})


def test_max_tokens_fault_and_natural_truncation(client):
    full = client.messages.create(model=MODEL, max_tokens=500, messages=[{"role": "user", "content": "hi"}])
    cut = client.messages.create(model=MODEL, max_tokens=500, messages=[{"role": "user", "content": "hi"}],
                                 extra_headers={"x-offline-fault": "max_tokens"})
    assert cut.stop_reason == "max_tokens" and full.content[0].text.startswith(cut.content[0].text)
    assert len(cut.content[0].text) < len(full.content[0].text)
    tiny = client.messages.create(model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert tiny.stop_reason == "max_tokens" and tiny.content[0].text == full.content[0].text[:20]


def test_structured_faults(client):
    from pydantic import BaseModel

    class Out(BaseModel):
        summary: str

    kwargs = dict(model=MODEL, max_tokens=500, output_format=Out,
                  messages=[{"role": "user", "content": "I like long walks on the beach."}])
    ok = client.messages.parse(**kwargs)
    assert ok.parsed_output.summary == "I like long walks on the beach."
    for fault in ("malformed_json", "max_tokens"):
        raw = client.messages.create(model=MODEL, max_tokens=500, messages=kwargs["messages"],
                                     output_config={"format": {"type": "json_schema", "schema": Out.model_json_schema()}},
                                     extra_headers={"x-offline-fault": fault})
        import json
        with pytest.raises(ValueError):
            json.loads(raw.content[0].text)
        assert raw.stop_reason == ("max_tokens" if fault == "max_tokens" else "end_turn")
        with pytest.raises(Exception) as exc:
            client.messages.parse(**kwargs, extra_headers={"x-offline-fault": fault})
        assert "validation" in type(exc.value).__name__.lower() or "json" in str(exc.value).lower()

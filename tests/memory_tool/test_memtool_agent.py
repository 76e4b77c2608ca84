"""The memory-tool agent end to end: real embedded Postgres, the SDK's tool_runner, and the
offline model's memory-agent policy on loopback."""

from __future__ import annotations

import json
import uuid

import pytest
from anthropic.lib.tools import ToolError

from backends.base import Knobs, TurnContext
from llm.anthropic_chat import replayable
from backends.memory_tool.backend import MemoryToolBackend
from backends.memory_tool.tool import PostgresMemoryTool
from runtime import Runtime
from settings import load_settings
from tests.memory_tool.helpers import snapshot

PROGRESS = "I'm building a Rust CLI called quickgrep; I finished the argument parser."


def turn(backend: MemoryToolBackend, user_id: str, text: str, chunks: list[str] | None = None):
    result = backend.turn(TurnContext(user_id=user_id, text=text), on_text=None if chunks is None else chunks.append)
    assert result.error is None, result.error
    return result


def stored_payloads(runtime: Runtime, conversation_id: str, user_id: str) -> list[dict]:
    return [json.loads(m.payload) for m in runtime.store.load_messages(uuid.UUID(conversation_id), user_id)]


def test_resumes_project_progress_in_a_new_conversation(backend, user_id) -> None:
    first = turn(backend, user_id, PROGRESS)
    assert [(c.command, c.is_error) for c in first.tool_calls][0] == ("view", False)
    assert any(c.command in ("create", "insert", "str_replace") and not c.is_error for c in first.tool_calls)
    backend.new_conversation(user_id)

    chunks: list[str] = []
    second = turn(backend, user_id, "Where was I with my project?", chunks)
    assert second.conversation_id != first.conversation_id
    assert [c.command for c in second.tool_calls if c.command != "view"] == []  # a question writes nothing
    read = "\n".join(second.read_texts)
    assert "Finished the argument parser" in read and "quickgrep" in read
    assert not second.reply.startswith("[")  # no disclaimer prefix: the UI labels the model
    assert "argument parser" in second.reply  # the reply quotes the progress it read
    assert "".join(chunks) == second.reply  # streamed, then returned whole
    assert second.injected_texts == second.read_texts and second.recall.notes == []


def test_exchange_is_persisted_in_order_and_replayed(runtime, backend, user_id) -> None:
    first = turn(backend, user_id, PROGRESS)
    after_first = stored_payloads(runtime, first.conversation_id, user_id)
    roles = [m["role"] for m in after_first]
    assert roles[0] == "user" and roles[-1] == "assistant"
    assert roles == ["user", "assistant"] * (len(roles) // 2)  # tool_use / tool_result pairs in between
    for assistant, results in zip(after_first[1::2], after_first[2::2]):
        uses = [b["id"] for b in assistant["content"] if b["type"] == "tool_use"]
        answered = [b["tool_use_id"] for b in results["content"] if b["type"] == "tool_result"]
        assert uses == answered
    assert len(after_first) == 1 + 2 * len(first.tool_calls) + 1

    second = turn(backend, user_id, "Next I'll write the matcher.")
    assert second.conversation_id == first.conversation_id
    after_second = stored_payloads(runtime, second.conversation_id, user_id)
    assert after_second[: len(after_first)] == after_first  # append-only: turn 1 replays unchanged


def test_usage_is_summed_and_the_cached_prefix_grows(backend, user_id) -> None:
    results = [turn(backend, user_id, text) for text in (
        PROGRESS, "I live in Pune.", "Next I'll write the matcher.", "Where was I?")]
    for r in results:
        prompt = r.usage.input_tokens + r.usage.cache_read_tokens + r.usage.cache_write_tokens
        assert r.usage.output_tokens > 0 and prompt > 0
    # Each turn replays the previous turns' bytes as a stable prefix (top-level cache_control),
    # so by the last turn most of the prompt is read from the cache.
    last = results[-1].usage
    assert last.cache_read_tokens > last.input_tokens + last.cache_write_tokens


def test_user_b_never_sees_user_a_files(runtime, backend, make_user) -> None:
    user_a, user_b = make_user("a"), make_user("b")
    turn(backend, user_a, PROGRESS)
    a_texts = backend.stored_texts(user_a)
    assert any("quickgrep" in text for text in a_texts)

    a_rows = snapshot(runtime.engine, user_a)
    assert backend.list_memories(user_b) == [] and backend.stored_texts(user_b) == []
    b_store = backend.file_store(user_b)
    assert b_store.listing("/memories") == []
    b_tool = PostgresMemoryTool(b_store)
    for path in [row[1] for row in a_rows]:
        assert b_store.get(path) is None and not b_store.is_dir(path)
        with pytest.raises(ToolError, match="does not exist"):
            b_tool.call({"command": "view", "path": path})
        with pytest.raises(ToolError, match="does not exist"):
            b_tool.call({"command": "str_replace", "path": path, "old_str": "quickgrep", "new_str": "x"})
    assert b_tool.read_texts == []

    result = turn(backend, user_b, "Where was I with my project?")
    assert result.read_texts == []
    assert "quickgrep" not in result.reply and "argument parser" not in result.reply
    assert all("quickgrep" not in c.result for c in result.tool_calls)
    assert snapshot(runtime.engine, user_a) == a_rows  # A's rows untouched, last_read_at included
    assert backend.stored_texts(user_a) == a_texts


@pytest.mark.parametrize("limit", [1, 2])
def test_tool_runner_stops_at_the_iteration_cap(runtime, user_id, limit: int) -> None:
    capped = Runtime(settings=load_settings(agent_max_iterations=limit), engine=runtime.engine,
                     embedder=runtime.embedder, clock=runtime.clock)
    backend = MemoryToolBackend(capped)
    result = backend.turn(TurnContext(user_id=user_id, text=PROGRESS))
    assert result.error is not None and f"after {limit} steps" in result.error
    assert len(result.tool_calls) == limit  # one tool call per model call, then no further model call
    payloads = stored_payloads(runtime, result.conversation_id, user_id)
    assert [m["role"] for m in payloads] == ["user"] + ["assistant", "user"] * limit + ["assistant"]
    assert payloads[-1]["content"][0]["text"] == result.error
    # The conversation stays valid: the next (uncapped) turn is accepted by the API.
    assert MemoryToolBackend(runtime).turn(TurnContext(user_id=user_id, text="Where was I?")).error is None


def test_model_failure_persists_nothing(runtime, user_id) -> None:
    broken = Runtime(settings=load_settings(anthropic_base_url="http://127.0.0.1:9", llm_provider="anthropic",
                                            anthropic_api_key="sk-test", llm_timeout_seconds=2),
                     engine=runtime.engine, embedder=runtime.embedder, clock=runtime.clock)
    backend = MemoryToolBackend(broken)
    result = backend.turn(TurnContext(user_id=user_id, text=PROGRESS))
    assert result.error is not None and "Cannot reach" in result.error
    assert stored_payloads(runtime, result.conversation_id, user_id) == []


def test_history_folding_never_orphans_tool_results(runtime, user_id) -> None:
    """Tool-heavy turns exceed a small history budget: the fold must cut at a turn start."""
    small = Runtime(settings=load_settings(history_token_budget=400), engine=runtime.engine,
                    embedder=runtime.embedder, clock=runtime.clock)
    backend = MemoryToolBackend(small)
    for text in (PROGRESS, "I live in Pune.", "Next I'll write the matcher.", "Where was I?"):
        result = backend.turn(TurnContext(user_id=user_id, text=text))
        assert result.error is None, result.error
    conversation = uuid.UUID(result.conversation_id)
    assert small.history.summary_for(conversation, user_id) is not None  # the history did fold
    request = small.history.messages_for_request(user_id, conversation)
    first_blocks = request[0]["content"]
    assert request[0]["role"] == "user"
    assert not any(block.get("type") == "tool_result" for block in first_blocks)


def test_incognito_turn_reads_and_writes_nothing(runtime, backend, user_id) -> None:
    turn(backend, user_id, PROGRESS)
    before = backend.stored_texts(user_id)
    result = backend.turn(TurnContext(user_id=user_id, text="I live in Pune. Where was I?",
                                      knobs=Knobs(incognito=True)))
    assert result.error is None
    assert result.read_texts == [] and result.tool_calls and all(c.is_error for c in result.tool_calls)
    assert "incognito" in result.tool_calls[0].result
    assert backend.stored_texts(user_id) == before



def test_a_call_cut_at_max_tokens_is_not_replayed() -> None:
    text = {"type": "text", "text": "Let me check."}
    call = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": {"command": "vi"}}
    assert replayable([text, call], "max_tokens") == [text]
    assert replayable([text, call], "tool_use") == [text, call]

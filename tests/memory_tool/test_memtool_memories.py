"""What the Memories page, the evals and erasure see of the agent's files."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlmodel import Session

from backends.base import TurnContext
from backends.memory_tool.backend import MemoryToolBackend
from db.models import Conversation, Job, Message
from tests.memory_tool.helpers import snapshot

PROFILE = "# User profile\n- Lives in Pune\n\n- Has a dog named Rex\n- Likes green tea\n"


def test_records_are_the_non_empty_lines(backend, user_id) -> None:
    store = backend.file_store(user_id)
    store.create("/memories/user_profile.md", PROFILE)
    store.create("/memories/work/progress.md", "- Finished the argument parser\n")
    records = backend.list_memories(user_id)
    assert [r.content for r in records] == [
        "- Lives in Pune", "- Has a dog named Rex", "- Likes green tea", "- Finished the argument parser"]
    assert backend.stored_texts(user_id) == ["# User profile"] + [r.content for r in records]
    assert (records[1].location.path, records[1].location.line) == ("/memories/user_profile.md", 4)
    assert records[1].location.updated_at is not None
    assert all(r.kind == "file" and r.status == "live" and r.expires_at > r.created_at for r in records)


def test_delete_memory_removes_one_line_even_after_edits(backend, user_id) -> None:
    store = backend.file_store(user_id)
    store.create("/memories/user_profile.md", PROFILE)
    dog = next(r for r in backend.list_memories(user_id) if "dog" in r.content)
    store.write("/memories/user_profile.md", "- Moved to Oslo\n" + PROFILE)  # the line moved down by one
    assert backend.delete_memory(user_id, dog.id) is True
    assert store.get("/memories/user_profile.md").content == "- Moved to Oslo\n# User profile\n- Lives in Pune\n\n- Likes green tea\n"
    assert backend.delete_memory(user_id, dog.id) is False  # gone: a stale id deletes nothing else
    assert backend.delete_memory(user_id, "not-an-id") is False


def test_delete_memory_is_scoped_to_the_session_user(backend, make_user) -> None:
    owner, other = make_user("owner"), make_user("other")
    backend.file_store(owner).create("/memories/p.md", "- secret plan\n")
    [record] = backend.list_memories(owner)
    before = snapshot(backend.runtime.engine, owner)
    assert backend.delete_memory(other, record.id) is False
    assert snapshot(backend.runtime.engine, owner) == before


def test_forget_deletes_matching_lines_and_empty_files(backend, user_id) -> None:
    store = backend.file_store(user_id)
    store.create("/memories/user_profile.md", PROFILE)
    store.create("/memories/pets.md", "# Pets\n- Rex the dog is 3\n")
    gone = backend.forget(user_id, "my dog")
    assert sorted(r.content for r in gone) == ["- Has a dog named Rex", "- Rex the dog is 3"]
    assert store.get("/memories/pets.md") is None  # only a heading was left
    assert store.get("/memories/user_profile.md").content == "# User profile\n- Lives in Pune\n\n- Likes green tea\n"
    assert backend.forget(user_id, "the") == []  # no content words: nothing matches everything
    # Two of three topic words are enough; one of two is not.
    assert [r.content for r in backend.forget(user_id, "green tea habit")] == ["- Likes green tea"]
    assert backend.forget(user_id, "Pune weather") == []


def test_agent_forget_request_deletes_the_line(backend, user_id) -> None:
    backend.turn(TurnContext(user_id=user_id, text="I live in Pune and I have a dog named Rex."))
    assert any("Rex" in text for text in backend.stored_texts(user_id))
    result = backend.turn(TurnContext(user_id=user_id, text="Please forget my dog."))
    assert result.error is None
    assert not any("Rex" in text for text in backend.stored_texts(user_id))
    assert any("Pune" in text for text in backend.stored_texts(user_id))


def test_erase_user_removes_files_conversations_and_jobs(runtime, backend, make_user) -> None:
    user, bystander = make_user("erase"), make_user("keep")
    for who in (user, bystander):
        backend.turn(TurnContext(user_id=who, text="I'm building quickgrep; I finished the argument parser."))
    with Session(runtime.engine) as session:
        session.add(Job(kind="memory_tool.reindex", user_id=user, payload={"text": "quickgrep"},
                        run_after=runtime.clock.now(), created_at=runtime.clock.now(), updated_at=runtime.clock.now()))
        session.commit()
    keep_before = snapshot(runtime.engine, bystander)

    report = backend.erase_user(user)
    assert report.deleted["memory_files"] == 2 and report.deleted["conversations"] == 1
    assert report.deleted["messages"] >= 4 and report.deleted["jobs"] == 1
    assert backend.all_texts(user) == [] and snapshot(runtime.engine, user) == []
    with Session(runtime.engine) as session:
        for table, column in ((Message, Message.user_id), (Conversation, Conversation.user_id), (Job, Job.user_id)):
            assert session.scalar(select(func.count()).select_from(table).where(column == user)) == 0
    assert snapshot(runtime.engine, bystander) == keep_before
    assert any("quickgrep" in text for text in backend.all_texts(bystander))


def test_sweep_expires_files_unused_for_the_ttl(isolated_runtime, make_user) -> None:
    backend = MemoryToolBackend(isolated_runtime)
    ttl = isolated_runtime.settings.memory_file_ttl_days
    user = make_user("sweep")
    store = backend.file_store(user)
    store.create("/memories/old.md", "- old")
    store.create("/memories/read.md", "- read")
    store.create("/memories/written.md", "- written")
    isolated_runtime.clock.advance(days=ttl - 1)
    store.read("/memories/read.md")
    store.write("/memories/written.md", "- written again")
    isolated_runtime.clock.advance(days=2)  # old.md: ttl + 1 days unused; the others: 2 days
    counts = backend.sweep()
    assert counts["expired_files"] >= 1
    assert [f.path for f in store.files()] == ["/memories/read.md", "/memories/written.md"]

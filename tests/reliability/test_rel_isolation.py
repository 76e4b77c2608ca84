"""Cross-user isolation under concurrency: several users chat at the same time through every
backend, each telling it facts that carry the user's own made-up canary words; after the
background work, every surface that shows or uses a user's data (recall, the injected
notes and the reply, the memories list, every stored text incl. Mem0's history, memory
files, the transcript the lab shows, the job rows) is searched for the other users'
canaries. Each user's own canary must be found too, so the search can find things.

One user's own turns run in order (as one person types); the users run at the same time.
"""

from __future__ import annotations

import hashlib
import json
import re
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import select
from sqlmodel import Session

from backends.memory_tool.store import MemoryFileStore
from backends.registry import backend_names, build_backend
from core.turn import TurnContext, TurnResult
from db.models import Job
from jobs.runner import drain
from ui.transcript import open_transcript

USERS = 6
WORKERS = 8
MEMORY_BACKENDS = ("custom", "mem0", "memory_tool")


def canary(user_index: int, salt: str) -> str:
    """A made-up capitalised word, the same for a user on every run, unlike any other."""
    digest = hashlib.sha256(f"{salt}-{user_index}".encode()).digest()
    return "Zq" + "".join(chr(97 + byte % 26) for byte in digest[:7])


def messages(user_index: int) -> list[str]:
    return [f"My dog is called {canary(user_index, 'dog')}.",
            f"I grow {canary(user_index, 'plant')} tomatoes on my balcony."]


def _turn(backend, user_id: str, text: str) -> TurnResult:
    return backend.turn(TurnContext(user_id=user_id, text=text))


def _conversation(backend, user_id: str, texts: list[str]) -> list[TurnResult]:
    """One user's turns in order (as one person types them); users run at the same time."""
    return [_turn(backend, user_id, text) for text in texts]


def _surfaces(runtime, backend, user_id: str, answer: TurnResult) -> dict[str, str]:
    """Every place the lab shows or uses this user's data, as one text each."""
    recall = backend.prepare_turn(TurnContext(user_id=user_id, text="What is my dog called?"))
    with Session(runtime.engine) as session:
        jobs = session.scalars(select(Job).where(Job.user_id == user_id)).all()
    surfaces = {
        "recall notes": "\n".join(note.content for note in recall.notes),
        "injected system message": recall.system_message or "",
        "reply": answer.reply,
        "injected and read": "\n".join(answer.injected_texts),
        "tool calls": json.dumps([call.model_dump(mode="json") for call in answer.tool_calls], ensure_ascii=False),
        "memories list": "\n".join(record.content for record in backend.list_memories(user_id, include_inactive=True)),
        "every stored text": "\n".join(backend.all_texts(user_id)),
        "transcript": "\n".join(text for _, text, _ in open_transcript(runtime.engine, user_id, backend.name)),
        "jobs": json.dumps([[job.payload, job.result] for job in jobs], ensure_ascii=False, default=str),
    }
    if backend.name == "memory_tool":  # the files page reads the store directly
        files = MemoryFileStore(runtime.engine, user_id, runtime.clock).files()
        surfaces["memory files"] = "\n".join(f"{file.path}\n{file.content}" for file in files)
    return surfaces


def test_no_user_sees_another_users_canary(runtime, make_user, record_figure) -> None:
    backends = {name: build_backend(name, runtime) for name in backend_names()}
    users = [make_user(f"iso{index}") for index in range(USERS)]
    own = {user: [canary(index, "dog"), canary(index, "plant")] for index, user in enumerate(users)}
    conversations = [(backend, user, messages(index)) for index, user in enumerate(users) for backend in backends.values()]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        told = [result for results in pool.map(lambda args: _conversation(*args), conversations) for result in results]
    assert all(result.error is None for result in told), [result.error for result in told if result.error]
    with ThreadPoolExecutor(max_workers=2) as pool:  # two drains at once: jobs of all users interleave
        list(pool.map(lambda user: drain(runtime, user_id=user), users))
    asks = [(backend, user, "What is my dog called?") for user in users for backend in backends.values()]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        answers = dict(zip([(b.name, u) for b, u, _ in asks], pool.map(lambda args: _turn(*args), asks)))

    leaks, missing, checked = [], [], 0
    for user in users:
        others = [word for other, words in own.items() if other != user for word in words]
        pattern = re.compile("|".join(others))
        for name, backend in backends.items():
            surfaces = _surfaces(runtime, backend, user, answers[(name, user)])
            for surface, content in surfaces.items():
                checked += 1
                found = pattern.findall(content)
                if found:
                    leaks.append(f"{user} / {name} / {surface}: {sorted(set(found))}")
            if name in MEMORY_BACKENDS and own[user][0] not in surfaces["every stored text"]:
                missing.append(f"{user} / {name}: own canary not stored")
    record_figure(f"isolation: {USERS} users x {len(backends)} backends, {len(told) + len(asks)} concurrent turns, "
                  "places searched for other users' canaries", checked, leaks)
    assert not missing, missing

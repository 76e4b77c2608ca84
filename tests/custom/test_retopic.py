"""A better lexicon reaches the memories already stored: relabelled at start, on the real
embedded Postgres, from the stored text and embedding."""

from __future__ import annotations

from sqlalchemy import text

from backends.custom.backend import CustomPipelineBackend
from backends.custom.retopic import relabel_stale
from backends.custom.topics import topic_index


def _labels(backend: CustomPipelineBackend, memory_id: str) -> tuple[list[str], str]:
    with backend.runtime.engine.connect() as connection:
        row = connection.execute(text("SELECT topics, topics_lexicon FROM memories WHERE id = CAST(:id AS uuid)"),
                                 {"id": memory_id}).one()
    return list(row.topics), row.topics_lexicon


def test_a_memory_labelled_by_an_older_lexicon_is_relabelled_once(backend: CustomPipelineBackend, user_id: str) -> None:
    index = topic_index(backend.runtime.embedder)
    memory_id = backend.remember(user_id, "User's daughter has a nut allergy.")
    topics, fingerprint = _labels(backend, memory_id)
    assert fingerprint == index.fingerprint and {"family", "diet"} <= set(topics)

    with backend.runtime.engine.begin() as connection:  # as stored before topics existed
        connection.execute(text("UPDATE memories SET topics = '{}', topics_lexicon = '' WHERE id = CAST(:id AS uuid)"),
                           {"id": memory_id})
    assert relabel_stale(backend.runtime.engine, index) >= 1
    assert _labels(backend, memory_id) == (topics, index.fingerprint)
    assert relabel_stale(backend.runtime.engine, index) == 0  # nothing left stale: a restart costs one query


def test_the_backend_relabels_when_it_warms_up(backend: CustomPipelineBackend, user_id: str) -> None:
    memory_id = backend.remember(user_id, "User keeps bees in the back garden.")
    with backend.runtime.engine.begin() as connection:
        connection.execute(text("UPDATE memories SET topics = '{}', topics_lexicon = 'old' WHERE id = CAST(:id AS uuid)"),
                           {"id": memory_id})
    backend.warm_up()
    topics, fingerprint = _labels(backend, memory_id)
    assert topics and fingerprint == topic_index(backend.runtime.embedder).fingerprint

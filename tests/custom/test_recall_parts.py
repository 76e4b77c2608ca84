"""The recall improvements one by one, on sentences written for these tests: the user's
voice, the retrieval topics (real MiniLM), the message's form, the relevance model."""

from __future__ import annotations

import numpy as np
import pytest

from backends.custom.memory_voice import first_person_verb, in_user_voice
from backends.custom.message_form import is_personal
from backends.custom.relevance import FEATURES, Candidate, calibration_for, feature_rows, relevance
from backends.custom.topics import asked_topics, load_topics, topic_index, words_of
from embeddings import embed_one


@pytest.mark.parametrize("note, voice", [
    ("User lives in Porto.", "I live in Porto."),
    ("User's daughter plays the violin.", "My daughter plays the violin."),
    ("User is allergic to sesame.", "I am allergic to sesame."),
    ("User watches cricket with their uncle.", "I watch cricket with my uncle."),
    ("User carries an inhaler.", "I carry an inhaler."),
    ("User doesn't eat pork.", "I don't eat pork."),
    ("Prefers short answers.", "Prefers short answers."),  # no "User" subject: left as it is
])
def test_a_memory_is_embedded_in_the_users_voice(note: str, voice: str) -> None:
    assert in_user_voice(note) == voice


def test_first_person_verbs_follow_english_agreement() -> None:
    assert [first_person_verb(v) for v in ("flies", "catches", "misses", "goes", "has", "walked", "is")] == \
        ["fly", "catch", "miss", "go", "have", "walked", "am"]


PAIRS = [
    ("User lives in Porto.", "where am I living these days?"),
    ("User's son is called Theo.", "what's my boy's name again?"),
    ("User works night shifts at a bakery.", "when do I usually work?"),
    ("User is training for a half marathon.", "what am I training for?"),
    ("User has a tabby cat called Noodle.", "what's my cat called?"),
    ("User uses Obsidian for notes.", "which app do I keep my notes in?"),
]


def test_the_users_voice_is_closer_to_how_they_ask(runtime) -> None:
    """On average, not for every pair: the measure that counts is the recall benchmark's."""
    embedder = runtime.embedder
    gains = []
    for note, question in PAIRS:
        third, first, asked = embedder.embed_batch([note, in_user_voice(note), question])
        gains.append(float(first @ asked) - float(third @ asked))
    assert np.mean(gains) > 0.02, gains
    assert sum(gain > 0 for gain in gains) >= 4, gains


def test_memories_get_topics_from_cue_words_and_messages_ask_for_them(runtime) -> None:
    index = topic_index(runtime.embedder)
    def topics(text: str) -> list[str]:
        return index.memory_topics(text, embed_one(runtime.embedder, in_user_voice(text)))
    assert "diet" in topics("User cannot eat gluten.")
    assert "pet" in topics("User has a tabby cat called Noodle.")
    assert "vehicle" in topics("User drives a 2009 Honda Jazz.")
    asked = asked_topics(index.affinity(embed_one(runtime.embedder, "can you suggest somewhere to eat out tonight?")))
    assert "diet" in asked
    asked = asked_topics(index.affinity(embed_one(runtime.embedder, "is it fine for me to go running with a sore knee?")))
    assert "health" in asked


@pytest.mark.parametrize("text, topic, expected", [
    ("User's studio records jingles for radio.", "study", False),  # "stud*" once took a studio for studying
    ("User takes the ferry to work.", "health", False),            # "takes" is not a medication
    ("User codes in Rust.", "diet", False),                        # "codes" is not the plural of "cod"
    ("User started a pottery course.", "goal", False),             # an event, not a goal
    ("User has bronchitis.", "health", True),                      # a condition named by its ending
    ("User is colour-blind.", "health", True),                     # a compound gives its parts
    ("User broke her collarbone cycling.", "health", True),        # a body part
    ("User's allergies flare up in spring.", "health", True),      # "-ies" plural
    ("User is originally from Accra.", "home", True),
])
def test_cue_words_name_a_memorys_topics_without_false_friends(text: str, topic: str, expected: bool) -> None:
    topics = {t.name: t for t in load_topics()}
    assert topics[topic].cued_by(words_of(text)) is expected


def test_a_memory_no_cue_names_still_gets_its_nearest_topic(runtime) -> None:
    index = topic_index(runtime.embedder)
    text = "User takes apixaban every evening."  # a drug the lexicon does not list
    assert not any(topic.cued_by(words_of(text)) for topic in index.topics)
    assert index.memory_topics(text, embed_one(runtime.embedder, in_user_voice(text))) != []


@pytest.mark.parametrize("text, personal", [
    ("what should I make for lunch?", True),
    ("grandpa keeps asking about the match, who won?", True),
    ("suggest a gift for a ten year old", True),
    ("any tips for a long drive tonight?", True),
    ("a quiet beach worth visiting right now?", True),
    ("why is the ocean salty?", False),
    ("who painted the Sistine Chapel ceiling?", False),
    ("what's the boiling point of water at altitude", False),
])
def test_a_message_about_its_sender_is_told_from_one_about_the_world(text: str, personal: bool) -> None:
    assert is_personal(text) is personal


def test_relevance_rises_with_similarity_and_topic_and_falls_for_a_world_question() -> None:
    calibration = calibration_for("local-minilm")
    assert calibration is not None and calibration.features == list(FEATURES)
    weak, strong = Candidate(0.10, 0.20, False, 0), Candidate(0.45, 0.70, False, 1)
    low, high = relevance([weak, strong], True, calibration)
    assert high > 0.5 > low
    (alone_personal,), (alone_world,) = relevance([strong], True, calibration), relevance([strong], False, calibration)
    assert alone_personal > alone_world
    rows = feature_rows([weak, strong], True)
    assert rows.shape == (2, len(FEATURES)) and np.all(np.isfinite(rows))


def test_without_a_calibration_the_gate_reads_the_cosine() -> None:
    assert calibration_for("an-embedder-nobody-fitted") is None
    assert relevance([Candidate(0.42, 0.9, False, 0)], True, None) == [0.42]

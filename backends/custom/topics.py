"""Retrieval topics: the write-time keys that let a message find a memory it shares no word with.

"Suggest a restaurant for tonight" and "User is lactose intolerant." are close to nothing
in embedding space, yet the second changes the answer to the first. What connects them is
the KIND of fact (a diet) and the kinds of request it matters to (food, eating out,
travel). So each memory is labelled, when it is stored, with the topics it is about (cue
words from a lexicon, or its embedding's closeness to the topic's description), and each
message is scored, when it arrives, by how close it is to what people ask when a topic
matters (the topic's `asks`, embedded once per process). Recall then treats a memory of a
topic the message is asking about as a candidate, whatever its words.

The lexicon is data (`lexicon/topics.yaml`), general categories of personal facts; the
code only reads it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from embeddings import Embedder

LEXICON = Path(__file__).parent / "lexicon" / "topics.yaml"

DESCRIPTION_MATCH = 0.30
"""A memory this close (cosine) to a topic's description gets the topic without a cue word."""

NEAREST_TOPIC_FLOOR = 0.10
"""A memory with no topic takes its nearest description's topic if at least this close."""

RULES_VERSION = 2
"""Bump when the cue-matching code changes (plurals, compounds, endings): with the lexicon's
bytes and the embedder it makes the fingerprint that says a stored memory's topics are stale."""

_HEX_AS_LETTERS = str.maketrans("0123456789", "ghijklmnop")
"""The fingerprint is written in letters only: the secrets tests search every stored byte
for digit runs (a PIN, a card), and a hex digest would match one by chance."""

QUERY_TOPICS = 3
"""How many of the message's closest topics pull their memories into the candidates."""

_WORD = re.compile(r"[a-zà-ÿ][a-zà-ÿ'\-]*")


@dataclass(frozen=True)
class Topic:
    name: str
    description: str
    words: frozenset[str]
    prefixes: tuple[str, ...]
    asks: tuple[str, ...]
    suffixes: tuple[str, ...] = ()
    """Word endings that name the topic whatever the stem (medicine's "-itis", "-osis"):
    a lexicon of conditions can never be complete, their morphology nearly is."""

    def cued_by(self, words: set[str]) -> bool:
        return any(_singular(word) in self.words or word in self.words or word.startswith(self.prefixes)
                   or self._ends_as(word) for word in words)

    def _ends_as(self, word: str) -> bool:
        return any(word.endswith(suffix) and len(word) > len(suffix) + 2 for suffix in self.suffixes)


_ES_PLURAL = ("ches", "shes", "sses", "xes", "zes", "oes")
"""Plurals that take "-es" ("matches", "tomatoes"); any other "-es" is "-e" + "s" ("codes", not "cod")."""


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(_ES_PLURAL) and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def words_of(text: str) -> set[str]:
    """Lower-case words, the memory's grammatical subject ("User", "User's") dropped.
    A hyphenated compound also gives its parts ("colour-blind" is about blindness)."""
    words = {word.strip("'-") for word in _WORD.findall(text.lower())}
    parts = {part for word in words if "-" in word for part in word.split("-") if len(part) > 2}
    return (words | parts) - {"user", "user's"}


@functools.lru_cache(maxsize=1)
def load_topics(path: Path = LEXICON) -> tuple[Topic, ...]:
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    topics = []
    for entry in entries:
        cues = [str(cue).lower() for cue in [*entry["cues"], *entry.get("foods", [])]]
        topics.append(Topic(
            name=entry["topic"], description=entry["description"],
            words=frozenset(cue for cue in cues if not cue.endswith("*")),
            prefixes=tuple(cue[:-1] for cue in cues if cue.endswith("*")),
            asks=tuple(entry["asks"]), suffixes=tuple(entry.get("suffixes", [])),
        ))
    return tuple(topics)


class TopicIndex:
    """The topics with their embedded descriptions and asks, for one embedder."""

    def __init__(self, embedder: Embedder, topics: tuple[Topic, ...], lexicon: Path = LEXICON) -> None:
        self.topics = topics
        digest = hashlib.sha256(
            f"{RULES_VERSION}|{DESCRIPTION_MATCH}|{NEAREST_TOPIC_FLOOR}|{embedder.name}|".encode() + lexicon.read_bytes()
        ).hexdigest()[:16]
        self.fingerprint = digest.translate(_HEX_AS_LETTERS)
        """What labelled a memory: stored beside its topics (backends/custom/retopic.py)."""
        self.names = [topic.name for topic in topics]
        self.descriptions = embedder.embed_batch([topic.description for topic in topics])
        asks = [(i, ask) for i, topic in enumerate(topics) for ask in topic.asks]
        self._ask_topic = np.array([i for i, _ in asks])
        self.asks = embedder.embed_batch([ask for _, ask in asks])

    def memory_topics(self, text: str, vector: np.ndarray) -> list[str]:
        """The topics a memory is about: named by a cue word, or close to the description."""
        words = words_of(text)
        closeness = self.descriptions @ np.asarray(vector, dtype=np.float32)
        found = [topic.name for topic, near in zip(self.topics, closeness >= DESCRIPTION_MATCH) if near or topic.cued_by(words)]
        if not found and closeness.max() >= NEAREST_TOPIC_FLOOR:
            # No cue and no close description (a drug or a condition the lexicon lacks): the
            # nearest topic is still a better key than none, which no message can reach.
            found = [self.names[int(closeness.argmax())]]
        return found

    def affinity(self, query_vector: np.ndarray) -> dict[str, float]:
        """Per topic, the message's best cosine to what people ask when the topic matters."""
        scores = self.asks @ np.asarray(query_vector, dtype=np.float32)
        best = np.full(len(self.topics), -1.0, dtype=np.float32)
        np.maximum.at(best, self._ask_topic, scores)
        return {name: float(score) for name, score in zip(self.names, best)}


def asked_topics(affinity: dict[str, float], limit: int = QUERY_TOPICS) -> list[str]:
    return sorted(affinity, key=affinity.__getitem__, reverse=True)[:limit]


@functools.lru_cache(maxsize=4)
def topic_index(embedder: Embedder) -> TopicIndex:
    """One index per embedder per process: embedding the asks costs about a second."""
    return TopicIndex(embedder, load_topics())

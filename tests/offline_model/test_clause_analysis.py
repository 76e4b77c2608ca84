"""Unit tests of the clause grammar (segmentation, subject, mood, negation, tense, time) on our own
sentences: the features every predicate relies on, read without any fact table."""

from __future__ import annotations

import pytest

from offline_model.rules.memory import clauses
from offline_model.rules.segment import QUOTE_MASK, own_words


def one(text: str):
    (c,) = clauses(text)
    return c


@pytest.mark.parametrize("text, subject", [
    ("I'm a welder.", "i"), ("im a welder", "i"), ("We adopted a puppy.", "we"),
    ("My brother Omar and I run a bakery.", "with"), ("Jo and I got married.", "with"),
    ("My aunt is a judge.", "my"), ("Sold my bike yesterday.", "implicit"),
    ("It is raining.", "third"), ("Lewis is a chef.", "none"),
])
def test_subject(text, subject):
    assert one(text).subject == subject


@pytest.mark.parametrize("text, mood", [
    ("I live in Graz.", "statement"), ("Do I live in Graz?", "question"), ("Where do I live?", "question"),
    ("If I lived in Graz, I'd ski.", "hypothetical"), ("Maybe I'm a morning person.", "hypothetical"),
    ("Write me a limerick.", "imperative"), ("I might be allergic to cats.", "hypothetical"),
])
def test_mood_of_the_first_clause(text, mood):
    assert clauses(text)[0].mood == mood


def test_negation_tense_and_no_longer():
    c = one("I don't play chess anymore.")
    assert (c.negated, c.no_longer, c.verb_lemma, c.tense) == (True, True, "play", "present")
    c = one("I wasn't at home last night.")
    assert (c.negated, c.copula, c.tense, c.time.text, c.time.direction) == (True, True, "past", "last night", "past")
    c = one("I'll be in Porto next week.")
    assert (c.tense, c.copula, c.time.direction) == ("future", True, "future")
    c = one("I've been learning the banjo for two years.")
    assert (c.tense, c.progressive, c.verb_lemma, c.rest) == ("perfect", True, "learn", "the banjo for two years.")


def test_coordinated_predicates_inherit_the_subject():
    first, second = clauses("I'm vegan and allergic to soy.")
    assert (first.subject, first.rest) == ("i", "vegan")
    assert (second.subject, second.copula, second.rest) == ("i", True, "allergic to soy.")
    first, second = clauses("I live in Cork but commute to Limerick.")
    assert (second.subject, second.verb_lemma, second.inherited) == ("i", "commute", True)


def test_a_noun_coordination_is_not_split():
    assert len(clauses("I live with my cousin and her two dogs.")) == 1
    assert len(clauses("I use Emacs, plus git for everything.")) == 1


def test_a_question_after_a_statement_leaves_the_statement():
    statement, question = clauses("I teach yoga - any tips for a sore wrist?")
    assert (statement.mood, question.mood) == ("statement", "question")


def test_contrast_and_change():
    assert one("My tortoise is called Shelly, not Speedy.").contrast_old == "Speedy"
    assert one("I moved from Derby to Hull.").from_old == "Derby"


def test_quoted_and_pasted_text_is_masked():
    masked = own_words("Is 'I love my job' sarcastic?")
    assert "love" not in masked and QUOTE_MASK in masked
    assert "sunny" not in own_words("My neighbour texted: I'm off to sunny Spain!")
    assert own_words("note: I'm a vegan.") == "note: I'm a vegan."


def test_a_take_back_drops_the_clause_before():
    assert any(c.retracts_previous for c in clauses("I have two cats, no wait, three cats."))


def test_pronoun_resolves_to_the_last_named_relative():
    c = clauses("My uncle Raj lives nearby and he's a pilot.")[1]
    assert (c.subject, c.head, c.name) == ("pronoun", "uncle", "Raj")

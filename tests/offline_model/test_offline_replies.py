"""Offline chat replies: plain sentences that use the injected notes, keyed by intent; no disclaimer."""

from __future__ import annotations

import pytest

MODEL = "claude-offline-test"
MID_BETA = "mid-conversation-system-clear-at-2026-08-21"


def ask(client, text: str, notes: list[str]) -> str:
    messages = [{"role": "user", "content": text}]
    if notes:
        body = "<memory_notes>\n" + "\n".join(f"- [2026-12-01] (semantic) {n}" for n in notes) + "\n</memory_notes>"
        messages.append({"role": "system", "content": body, "clear_at": "never"})
    return client.beta.messages.create(model=MODEL, max_tokens=300, betas=[MID_BETA], messages=messages).content[0].text


@pytest.mark.parametrize("text, notes, reply", [
    ("Where do I live these days?", ["User lives in Pune."], "You live in Pune."),
    ("what's my dog called?", ["User has a beagle named Biscuit.", "User lives in Pune."], "You have a beagle named Biscuit."),
    ("Any ideas for dinner tonight?", ["User is vegetarian.", "User is allergic to peanuts."],
     "Since you're vegetarian and you avoid peanuts, how about a few options that fit that? Tell me a little more and I'll narrow them down."),
    ("thanks!", ["User is vegetarian."], "You're welcome!"),
    ("hey there", [], "Hi! What can I help you with today?"),
])
def test_reply_uses_the_notes_by_intent(client, text, notes, reply):
    assert ask(client, text, notes) == reply


@pytest.mark.parametrize("text", ["Write a short toast for my sister's wedding.", "What year did the Berlin Wall fall?", "I like jazz."])
def test_replies_are_one_or_two_plain_sentences(client, text):
    reply = ask(client, text, ["User's sister is named Ana."])
    assert "offline model" not in reply.lower() and not reply.startswith("[") and "Notes used" not in reply
    assert 1 <= reply.count(".") + reply.count("?") + reply.count("!") <= 3

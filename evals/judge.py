"""Answer accuracy by an LLM judge, for the LoCoMo benchmark with a real model.

Evidence hit@k says whether recall found the right turn; it does not say whether the
notes were enough to answer. With a real model configured, the notes recalled for a
question are given to the chat model to answer, and a second call grades the answer
against LoCoMo's gold answer (a structured verdict, so no free-text parsing). The
offline model is rule-based: its answers and verdicts would measure nothing, so the
benchmark skips this unless forced.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from llm.chat_model import ChatModel, LLMError

ANSWER_SYSTEM = (
    "Answer the question about two people from the notes below, in one short sentence. "
    "The notes are data recalled from their past conversations; use only them. "
    "If the notes do not contain the answer, say you don't know."
)
JUDGE_SYSTEM = (
    "You grade answers to questions about a long conversation. Given the question, the gold "
    "answer and a candidate answer, decide whether the candidate states the same fact as the "
    "gold answer (dates may be phrased differently; extra detail is fine; a wrong or missing "
    "fact is incorrect)."
)


class Verdict(BaseModel):
    correct: bool = Field(description="true when the candidate answer matches the gold answer")
    reason: str = Field(description="one short sentence")


def answer_question(model: ChatModel, question: str, notes: list[str]) -> str:
    listed = "\n".join(f"- {note}" for note in notes) or "(no notes)"
    prompt = f"<notes>\n{listed}\n</notes>\n\nQuestion: {question}"
    try:
        return model.chat(ANSWER_SYSTEM, [{"role": "user", "content": prompt}], max_tokens=200).text.strip()
    except LLMError as error:
        return f"(no answer: {error})"


def judge_answer(model: ChatModel, question: str, gold: str, candidate: str) -> bool | None:
    """True/False from the judge, or None when it gave no parseable verdict."""
    prompt = f"Question: {question}\nGold answer: {gold}\nCandidate answer: {candidate}"
    try:
        verdict = model.parse(JUDGE_SYSTEM, [{"role": "user", "content": prompt}], Verdict, max_tokens=300)
    except LLMError:
        return None
    return None if verdict is None else verdict.correct

"""`python -m evals.locomo --conversation 26`: the LoCoMo benchmark through our backends.

Each speaker is a user of the backend; their turns are said to it in order, with the
clock set to each session's date, and each turn's background jobs are finished before
the next. Then, for every question of categories 1-4 whose evidence lies in the ingested
sessions, recall runs for both speakers and we score through provenance: a memory's
source message id maps back to the LoCoMo turn (`dia_id`) it came from, and a question
is a hit when one of its evidence turns is among the top-k recalled memories. This
measures recall itself, not how well a model writes an answer; with a real model the
answers are also graded by an LLM judge (evals.judge).

`--ingest raw` skips the extractor: every turn is stored as its speaker's memory through
the backend's write path (Mem0 `infer=False`), so hit@k measures recall on real
conversations whatever the extractor can do.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from backends.base import Knobs, MemoryBackend, MemoryRecord, Note, TurnContext
from runtime import Runtime
from evals.background import finish_jobs
from evals.judge import answer_question, judge_answer
from evals.locomo_data import DEFAULT_ZIP, Conversation, Question, Session, load_conversation
from evals.runner import BackendUnavailable, EvalRunner, check_backends, eval_runtime, stderr_progress
from llm.tokens import approx_tokens
from settings import REPO_ROOT, get_settings
from evals.tables import markdown_table

RAW_BACKENDS = ("custom", "mem0")
"""The backends that can store a turn without a chat model (`MemoryBackend.remember`)."""
SCORED_CATEGORIES = (1, 2, 3, 4)  # 5 is adversarial: no answer exists to recall
TURN_SPACING = timedelta(seconds=30)


@dataclass
class Ingested:
    """What ingestion left behind: who is who, and which message was which LoCoMo turn."""

    users: dict[str, str]
    dia_by_message: dict[str, str] = field(default_factory=dict)
    dia_by_memory: dict[str, str] = field(default_factory=dict)
    """--ingest raw: each stored memory IS a turn, so its id names the turn directly."""
    turn_ms: list[float] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ended_at: datetime | None = None


class QuestionResult(BaseModel):
    question: str
    category: int
    evidence: list[str]
    retrieved: list[str | None]
    hit_at_k: bool | None
    hit_injected: bool | None
    injected_tokens: int
    recall_ms: float
    answer: str | None = None
    judged_correct: bool | None = None


def _at(runtime: Runtime, moment: datetime) -> None:
    """Move the eval's private clock so that now() reads `moment`."""
    runtime.clock.set_offset(moment - datetime.now(timezone.utc))


def ingest(runtime: Runtime, backend: MemoryBackend, conversation: Conversation, sessions: list[Session],
           knobs: Knobs, prefix: str, progress=stderr_progress) -> Ingested:
    users = {speaker: runtime.store.ensure_user(f"{prefix}-{speaker}"[:64]) for speaker in conversation.speakers}
    done = Ingested(users=users)
    for session in sessions:
        for user_id in users.values():
            backend.new_conversation(user_id)
        for index, turn in enumerate(session.turns):
            _at(runtime, session.started_at + index * TURN_SPACING)
            started = time.perf_counter()
            result = backend.turn(TurnContext(user_id=users[turn.speaker], text=turn.text, knobs=knobs))
            finish_jobs(runtime, users[turn.speaker], result.jobs)
            done.turn_ms.append((time.perf_counter() - started) * 1000)
            done.transcript.append(f"{turn.speaker}: {turn.text}")
            if result.error:
                done.errors.append(f"{turn.dia_id}: {result.error}")
            elif result.user_message_id:
                done.dia_by_message[result.user_message_id] = turn.dia_id
        progress(f"{backend.name}: session {session.number} ingested ({len(session.turns)} turns)")
        done.ended_at = session.started_at + len(session.turns) * TURN_SPACING
    return done


def ingest_raw(runtime: Runtime, backend: MemoryBackend, conversation: Conversation, sessions: list[Session],
               prefix: str, progress=stderr_progress) -> Ingested:
    """Every turn stored as its speaker's memory through the backend's write path, no
    extractor (Mem0: `infer=False`): hit@k then measures recall alone, on real talk.

    Turns are stored as facts, not events, so the half-life does not rank month-old
    evidence below yesterday's small talk: the measure is of the ranking, not of the decay.
    """
    users = {speaker: runtime.store.ensure_user(f"{prefix}-{speaker}"[:64]) for speaker in conversation.speakers}
    done = Ingested(users=users)
    for session in sessions:
        for index, turn in enumerate(session.turns):
            started = time.perf_counter()
            moment = session.started_at + index * TURN_SPACING
            memory_id = backend.remember(users[turn.speaker], turn.text, "semantic", moment)
            done.turn_ms.append((time.perf_counter() - started) * 1000)
            done.transcript.append(f"{turn.speaker}: {turn.text}")
            done.dia_by_memory[memory_id] = turn.dia_id
        progress(f"{backend.name}: session {session.number} stored raw ({len(session.turns)} turns)")
        done.ended_at = session.started_at + len(session.turns) * TURN_SPACING
    return done


def _rank(note: Note) -> float:
    for value in (note.score, note.similarity):
        if value is not None:
            return value
    return float("-inf")


def _dia_of(note: Note, records: dict[str, MemoryRecord], ingested: Ingested) -> str | None:
    if note.memory_id in ingested.dia_by_memory:
        return ingested.dia_by_memory[note.memory_id]
    record = records.get(note.memory_id)
    return None if record is None or record.source_message_id is None else ingested.dia_by_message.get(record.source_message_id)


class Benchmark:
    """One backend through one conversation: ingestion, then the questions."""

    def __init__(self, runtime: Runtime, backend: MemoryBackend, knobs: Knobs, k: int, judge: bool,
                 raw: bool = False) -> None:
        self.runtime, self.backend, self.knobs, self.k, self.judge = runtime, backend, knobs, k, judge
        self.raw = raw
        self.users: list[str] = []

    def questions(self, conversation: Conversation, sessions: list[Session]) -> list[Question]:
        ingested = {session.number for session in sessions}
        return [q for q in conversation.questions
                if q.category in SCORED_CATEGORIES and q.evidence and q.evidence_sessions() <= ingested]

    def run(self, conversation: Conversation, sessions: list[Session], prefix: str, progress=stderr_progress) -> dict:
        if self.raw:
            _at(self.runtime, sessions[0].started_at)
            ingested = ingest_raw(self.runtime, self.backend, conversation, sessions, prefix, progress)
        else:
            ingested = ingest(self.runtime, self.backend, conversation, sessions, self.knobs, prefix, progress)
        self.users = list(ingested.users.values())
        _at(self.runtime, (ingested.ended_at or datetime.now(timezone.utc)) + timedelta(hours=1))
        records = {r.id: r for u in ingested.users.values() for r in self.backend.list_memories(u, include_inactive=True)}
        traceable = sum(1 for r in records.values()
                        if r.source_message_id in ingested.dia_by_message or r.id in ingested.dia_by_memory)
        # Without provenance a hit cannot be told from a miss: report n/a, not 0.
        measurable = traceable > 0 or not records
        results = [self.ask(q, ingested, records, measurable) for q in self.questions(conversation, sessions)]
        progress(f"{self.backend.name}: {len(results)} questions asked")
        live = [r for r in records.values() if r.status == "live"]
        return summarise(self.backend.name, ingested, results, len(live), traceable, len(records), self.k)

    def ask(self, question: Question, ingested: Ingested, records: dict[str, MemoryRecord], measurable: bool) -> QuestionResult:
        notes: list[Note] = []
        started = time.perf_counter()
        for user_id in ingested.users.values():
            notes += self.backend.prepare_turn(TurnContext(user_id=user_id, text=question.question, knobs=self.knobs)).notes
        recall_ms = (time.perf_counter() - started) * 1000
        top = sorted(notes, key=_rank, reverse=True)[: self.k]
        injected = [note for note in notes if note.status == "injected"]
        evidence = set(question.evidence)
        retrieved = [_dia_of(note, records, ingested) for note in top]
        injected_dias = {_dia_of(note, records, ingested) for note in injected}
        result = QuestionResult(
            question=question.question, category=question.category, evidence=question.evidence, retrieved=retrieved,
            hit_at_k=bool(evidence & set(retrieved)) if measurable else None,
            hit_injected=bool(evidence & injected_dias) if measurable else None,
            injected_tokens=sum(note.tokens or approx_tokens(note.content) for note in injected), recall_ms=recall_ms,
        )
        if self.judge and question.answer is not None:
            result.answer = answer_question(self.runtime.chat_model, question.question, [n.content for n in injected])
            result.judged_correct = judge_answer(self.runtime.chat_model, question.question, question.answer, result.answer)
        return result


def _share(values: list[bool | None]) -> float | None:
    known = [value for value in values if value is not None]
    return round(sum(known) / len(known), 4) if known else None


def _pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 2) if values else None


def summarise(backend: str, ingested: Ingested, results: list[QuestionResult], live: int, traceable: int,
              total_records: int, k: int) -> dict:
    full_tokens = approx_tokens("\n".join(ingested.transcript))
    mean_injected = float(np.mean([r.injected_tokens for r in results])) if results else 0.0
    return {
        "backend": backend,
        "turns": len(ingested.turn_ms),
        "turn_errors": ingested.errors,
        "ingest_ms_per_turn_mean": round(float(np.mean(ingested.turn_ms)), 2) if ingested.turn_ms else None,
        "ingest_ms_per_turn_p95": _pct(ingested.turn_ms, 95),
        "memories_live": live,
        "memories_with_provenance": f"{traceable}/{total_records}",
        "questions": len(results),
        "k": k,
        "hit_at_k": _share([r.hit_at_k for r in results]),
        "hit_injected": _share([r.hit_injected for r in results]),
        "hit_at_k_by_category": {str(c): _share([r.hit_at_k for r in results if r.category == c]) for c in SCORED_CATEGORIES},
        "injected_tokens_per_question": round(mean_injected, 1),
        "full_conversation_tokens": full_tokens,
        "injected_share_of_full": round(mean_injected / full_tokens, 4) if full_tokens else None,
        "recall_ms_p50": _pct([r.recall_ms for r in results], 50),
        "recall_ms_p95": _pct([r.recall_ms for r in results], 95),
        "judge_accuracy": _share([r.judged_correct for r in results]),
        "per_question": [r.model_dump() for r in results],
    }


ROWS = [
    ("turns ingested", "turns"), ("ingest ms/turn (mean)", "ingest_ms_per_turn_mean"),
    ("ingest ms/turn (p95)", "ingest_ms_per_turn_p95"), ("memories live", "memories_live"),
    ("memories with provenance", "memories_with_provenance"), ("questions (cat 1-4)", "questions"),
    ("evidence hit@k", "hit_at_k"), ("evidence hit (injected)", "hit_injected"),
    ("injected tokens/question", "injected_tokens_per_question"), ("full conversation tokens", "full_conversation_tokens"),
    ("injected / full", "injected_share_of_full"), ("recall ms p50 (both speakers)", "recall_ms_p50"),
    ("recall ms p95 (both speakers)", "recall_ms_p95"), ("judge accuracy", "judge_accuracy"),
]


def table(summaries: list[dict]) -> str:
    header = ["metric", *(s["backend"] for s in summaries)]
    rows = [[label.replace("@k", f"@{summaries[0]['k']}") if summaries else label,
             *("n/a" if s[key] is None else str(s[key]) for s in summaries)] for label, key in ROWS]
    return markdown_table(header, rows)


def run(conversation_id: str, sessions: int | None, backends: list[str], knobs: Knobs, k: int, judge: bool,
        zip_path: Path = DEFAULT_ZIP, runtime: Runtime | None = None, keep: bool = False, progress=stderr_progress,
        raw: bool = False) -> dict:
    conversation = load_conversation(conversation_id, zip_path)
    chosen = conversation.sessions[:sessions] if sessions else conversation.sessions
    runtime = runtime or eval_runtime()
    runner, run_id = EvalRunner(runtime, knobs), uuid.uuid4().hex[:6]
    summaries = []
    names = check_backends(backends or (list(RAW_BACKENDS) if raw else []))
    for name in names:
        backend = runner.backend(name)
        bench = Benchmark(runtime, backend, knobs, k, judge, raw)
        summary = bench.run(conversation, chosen, f"lc{run_id}-{conversation_id}-{name.replace('_', '')}", progress)
        summaries.append(summary)
        if not keep:
            _erase(backend, bench.users, progress)
    runtime.clock.reset()
    return {"conversation": conversation_id, "sessions": [s.number for s in chosen], "judge": judge,
            "ingest": "raw" if raw else "turns",
            "min_similarity": knobs.min_similarity, "backends": summaries}


def _erase(backend: MemoryBackend, users: list[str], progress) -> None:
    """The benchmark's users are throwaway: erase their data so the lab's stores stay clean."""
    for user_id in users:
        try:
            backend.erase_user(user_id)
        except Exception as error:  # noqa: BLE001 - a failed clean-up must not lose the measurements
            progress(f"{backend.name}: could not erase {user_id}: {error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.locomo", description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", default="26", help="LoCoMo conversation id (26, 30, ...)")
    parser.add_argument("--sessions", type=int, help="ingest only the first N sessions (default: all)")
    parser.add_argument("--backend", nargs="+", action="extend", metavar="NAME")
    parser.add_argument("--k", type=int, help="hit@k cut-off (default: TOP_K)")
    parser.add_argument("--min-similarity", type=float, metavar="X")
    parser.add_argument("--judge", action=argparse.BooleanOptionalAction, default=None,
                        help="answer + LLM judge (default: on with a real model, off with the offline model)")
    parser.add_argument("--zip", type=Path, default=DEFAULT_ZIP)
    parser.add_argument("--json", type=Path, help="default: artifacts/locomo-<conversation>.json")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's users instead of erasing them")
    parser.add_argument("--ingest", choices=("turns", "raw"), default="turns",
                        help="turns: chat every turn through the backend (its extractor decides what to keep); "
                             "raw: store every turn as a memory, no extractor (default: turns)")
    args = parser.parse_args(argv)
    settings = get_settings()
    overrides = {} if args.min_similarity is None else {"min_similarity": args.min_similarity}
    knobs = Knobs.from_settings(settings, **overrides)
    judge = (not settings.is_offline) if args.judge is None else args.judge
    try:
        report = run(args.conversation, args.sessions, args.backend or [], knobs, args.k or knobs.top_k, judge,
                     args.zip, keep=args.keep, raw=args.ingest == "raw")
    except (BackendUnavailable, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(table(report["backends"]))
    suffix = "-raw" if args.ingest == "raw" else ""
    out = args.json or REPO_ROOT / "artifacts" / f"locomo-{args.conversation}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    stderr_progress(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

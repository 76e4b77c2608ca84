"""The memory-tool agent policy (tools include ``memory_20250818``).

Why a policy, not a script: the SDK's tool runner sends the whole message history on every step,
so the emulator is stateless; each step is derived from what tool calls already happened since
the last user text message. That makes the loop deterministic and finite: view ``/memories``,
view each listed file (max 5, skip > 20k chars), apply a fixed write plan computed from the
user's words and the files as read, then answer. Failed tool calls (``is_error``) are skipped,
never retried, so the turn always ends.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..protocol import Request, tool_result_text
from . import reply as chat
from .forget import forget_topic
from .memory import Turn, reconcile
from .secrets import is_secret
from .segment import own_words, sentences
from .textutil import content_stems, normalise_quotes

ROOT = "/memories"
PROFILE = "/memories/user_profile.md"
PROGRESS = "/memories/progress.md"
HEADERS = {PROFILE: "# User profile", PROGRESS: "# Task progress"}
MAX_FILES = 5
MAX_FILE_CHARS = 20_000

LISTING_RE = re.compile(r"^\s*([\d.]+)\s*([KMGT]?)B?\s*\t\s*(/memories/\S.*?)\s*$")
NUMBERED_RE = re.compile(r"^\s*\d+\t(.*)$")
PROGRESS_RULES = [
    (re.compile(r"^i(?:'ve| have)? (?:just |finally |now )?(?:finished|completed|done|wrapped up|shipped|submitted|fixed|implemented|written|wrote) (?P<x>.+)$", re.I), "Finished {x}.", "done"),
    (re.compile(r"^i(?:'ve| have) (?:just )?(?:started|begun|kicked off) (?P<x>.+)$|^i (?:just )?(?:started|began) (?P<y>.+)$", re.I), "Started {x}.", "started"),
    (re.compile(r"^i(?:'m| am) (?:now |currently )?on step (?P<x>\d+(?: of \d+)?)\b.*$", re.I), "Currently on step {x}.", "step"),
    (re.compile(r"^(?:next|after that|then),? i(?:'ll| will|'m going to| am going to| plan to) (?P<x>.+)$", re.I), "Next: {x}.", "next"),
]


@dataclass
class Call:
    """One memory tool call of the current turn and its result."""

    input: dict[str, Any]
    result: Optional[str]
    is_error: bool


@dataclass
class Plan:
    """What the turn will write, derived from the user's words and the files read."""

    commands: list[dict[str, Any]] = field(default_factory=list)


def _turn_calls(req: Request) -> tuple[int, list[Call]]:
    """Index of the last user text message and the memory calls made after it (in order)."""
    start = 0
    for i, msg in enumerate(req.messages):
        if msg.role == "user" and msg.text().strip():
            start = i
    calls: list[Call] = []
    results: dict[str, tuple[str, bool]] = {}
    for msg in req.messages[start + 1 :]:
        for b in msg.blocks:
            if b.get("type") == "tool_result":
                results[str(b.get("tool_use_id"))] = (tool_result_text(b), bool(b.get("is_error")))
    for msg in req.messages[start + 1 :]:
        if msg.role != "assistant":
            continue
        for b in msg.blocks:
            if b.get("type") == "tool_use" and b.get("name") == "memory":
                res = results.get(str(b.get("id")))
                calls.append(Call(dict(b.get("input") or {}), res[0] if res else None, res[1] if res else True))
    return start, calls


def _size_bytes(num: str, unit: str) -> float:
    return float(num) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}[unit]


def parse_listing(text: str) -> list[str]:
    """File paths from a ``view /memories`` result (SDK format: '<size>\\t<path>' lines)."""
    files = []
    for line in text.splitlines():
        m = LISTING_RE.match(line)
        if m and not m.group(3).endswith("/") and _size_bytes(m.group(1), m.group(2)) <= MAX_FILE_CHARS:
            files.append(m.group(3))
        elif not m:
            p = line.strip()
            if p.startswith(ROOT + "/") and not p.endswith("/") and "\t" not in p and " " not in p:
                files.append(p)
    return files[:MAX_FILES]


def file_text_from_view(result: str) -> str:
    """The file's text from a ``view`` result (strip the header line and line numbers)."""
    lines = result.split("\n")
    if lines and lines[0].startswith("Here's the content of"):
        lines = lines[1:]
    if lines and all(NUMBERED_RE.match(l) for l in lines if l):
        lines = [NUMBERED_RE.match(l).group(1) if NUMBERED_RE.match(l) else l for l in lines]  # type: ignore[union-attr]
    return "\n".join(lines)


def _progress_facts(text: str) -> list[tuple[str, str, bool]]:
    """(key, line content, single-valued) for task progress the user reports."""
    out = []
    norm = own_words(normalise_quotes(text))
    for span in sentences(norm):
        sentence = norm[span.start:span.end].strip().rstrip(".!")
        if sentence.endswith("?") or is_secret(sentence) or "\u2591" in sentence:
            continue
        for clause in re.split(r"\s*;\s*|\s*,\s*(?:and\s+)?(?=(?:next|then|after that|i)\b)|\s+and\s+(?=(?:next|then|i)\b)", sentence, flags=re.I):
            out.extend(_progress_clause(clause))
    return out


def _progress_clause(clause: str) -> list[tuple[str, str, bool]]:
    """Progress facts of one clause ('I finished X', 'next I'll Y', 'I'm on step N')."""
    sentence = re.sub(r"^(?:ok(?:ay)?|so|update|quick update|good news|also|and)[,:]?\s+", "", clause.strip(), flags=re.I)
    for pattern, template, tag in PROGRESS_RULES:
        m = pattern.match(sentence)
        if m:
            x = (m.groupdict().get("x") or m.groupdict().get("y") or "").strip().rstrip(".!")
            if x and len(x.split()) <= 15:
                key = f"progress:{tag}" + ("" if tag in ("step", "next") else ":" + " ".join(sorted(content_stems(x))))
                return [(key, template.format(x=x), tag in ("step", "next"))]
            return []
    return []


def _progress_key(line: str) -> Optional[str]:
    body = chat.clean_note(line)
    for prefix, tag in (("Finished ", "done"), ("Started ", "started")):
        if body.startswith(prefix):
            return f"progress:{tag}:" + " ".join(sorted(content_stems(body[len(prefix):].rstrip("."))))
    if body.startswith("Currently on step"):
        return "progress:step"
    if body.startswith("Next:"):
        return "progress:next"
    return None


class _FileSim:
    """In-memory copy of a file, to compute line numbers for a sequence of edits."""

    def __init__(self, path: str, text: Optional[str]):
        self.path = path
        self.exists = text is not None
        self.text = text or ""

    def lines(self) -> list[str]:
        lines = self.text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines

    def bullet_lines(self) -> list[str]:
        return [l for l in self.lines() if re.match(r"^\s*[-*]\s+\S", l)]


def _plan(req: Request, user_text: str, files: dict[str, str], today: dt.date) -> list[dict[str, Any]]:
    """The write commands for this turn, in order."""
    sims = {p: _FileSim(p, files.get(p)) for p in (PROFILE, PROGRESS)}
    pending_create: dict[str, list[str]] = {PROFILE: [], PROGRESS: []}
    commands: list[dict[str, Any]] = []

    def remove(path: str, line: str) -> None:
        sim = sims[path]
        remaining = [l for l in sim.bullet_lines() if l != line]
        if not remaining:
            commands.append({"command": "delete", "path": path})
            sim.exists, sim.text = False, ""
            return
        old = line + "\n" if line + "\n" in sim.text else line
        commands.append({"command": "str_replace", "path": path, "old_str": old, "new_str": ""})
        sim.text = sim.text.replace(old, "", 1)

    def upsert(path: str, content: str, key: str = "", single: bool = False, key_of=lambda line: None) -> None:
        sim = sims[path]
        new_line = f"- {content}"
        if not sim.exists:
            if new_line not in pending_create[path]:
                pending_create[path] = [l for l in pending_create[path] if not (single and key_of(l) == key)] + [new_line]
            return
        for line in sim.bullet_lines():
            if chat.clean_note(line).rstrip(".").lower() == content.rstrip(".").lower():
                return
        if single:
            for line in sim.bullet_lines():
                if key_of(line) == key and sim.text.count(line) == 1:
                    commands.append({"command": "str_replace", "path": path, "old_str": line, "new_str": new_line})
                    sim.text = sim.text.replace(line, new_line, 1)
                    return
        n = len(sim.lines())
        commands.append({"command": "insert", "path": path, "insert_line": n, "insert_text": new_line + "\n"})
        lines = sim.lines()
        lines.insert(n, new_line)
        sim.text = "\n".join(lines) + "\n"

    topic = forget_topic(user_text)
    if topic:
        wanted = content_stems(topic)
        need = max(1, math.ceil(len(wanted) / 2))
        for path in (PROFILE, PROGRESS):
            sim = sims[path]
            if not sim.exists:
                continue
            for line in list(sim.bullet_lines()):
                if sim.exists and len(wanted & content_stems(chat.clean_note(line))) >= need:
                    remove(path, line)
        return commands

    profile = sims[PROFILE]
    lines = {f"l{i}": line for i, line in enumerate(profile.bullet_lines() if profile.exists else [])}
    existing = [(ref, chat.clean_note(line)) for ref, line in lines.items()]
    for op in reconcile([Turn("user", user_text)], existing, today):
        if op.op == "add":
            upsert(PROFILE, op.content)
        elif op.op == "retract" and op.ref in lines:
            remove(PROFILE, lines.pop(op.ref))
        elif op.op == "update" and op.ref in lines:
            old = lines.pop(op.ref)
            if profile.exists and profile.text.count(old) == 1:
                commands.append({"command": "str_replace", "path": PROFILE, "old_str": old, "new_str": f"- {op.content}"})
                profile.text = profile.text.replace(old, f"- {op.content}", 1)
    for key, content, single in _progress_facts(user_text):
        upsert(PROGRESS, content, key, single, _progress_key)
    for path, lines in pending_create.items():
        if lines:
            commands.append({"command": "create", "path": path, "file_text": HEADERS[path] + "\n" + "\n".join(lines) + "\n"})
    return commands


def _tool_id(req: Request, n: int) -> str:
    digest = hashlib.sha256(repr([(m.role, m.blocks) for m in req.messages]).encode() + str(n).encode()).hexdigest()
    return f"toolu_offline_{digest[:20]}"


def step(req: Request) -> tuple[list[dict[str, Any]], str]:
    """The next content blocks and stop_reason of the memory agent for ``req``."""
    start, calls = _turn_calls(req)
    user_text = req.messages[start].text()

    def use(inp: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        return [{"type": "tool_use", "id": _tool_id(req, len(calls)), "name": "memory", "input": inp}], "tool_use"

    if not calls:
        return use({"command": "view", "path": ROOT})
    listing = calls[0]
    files = parse_listing(listing.result or "") if not listing.is_error else []
    viewed = {c.input.get("path"): c for c in calls[1:] if c.input.get("command") == "view"}
    for path in files:
        if path not in viewed:
            return use({"command": "view", "path": path})
    read: dict[str, str] = {}
    for path, call in viewed.items():
        if not call.is_error and call.result is not None and len(call.result) <= MAX_FILE_CHARS * 2:
            read[str(path)] = file_text_from_view(call.result)
    writes_done = [c for c in calls[1:] if c.input.get("command") != "view"]
    plan = _plan(req, user_text, read, dt.date.today())
    if len(writes_done) < len(plan):
        return use(plan[len(writes_done)])
    notes: list[str] = []
    for text in read.values():
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                notes.append(chat.clean_note(line))
    saved = 0
    for c in writes_done:
        if c.is_error:
            continue
        if c.input.get("command") == "create":
            saved += sum(1 for l in str(c.input.get("file_text", "")).splitlines() if l.startswith("- "))
        elif c.input.get("command") == "insert" or (c.input.get("command") == "str_replace" and c.input.get("new_str")):
            saved += 1
    return [{"type": "text", "text": chat.reply(req, notes=notes, saved=saved)}], "end_turn"


def is_agent_request(req: Request) -> bool:
    return req.memory_tool() is not None


__all__ = ["step", "is_agent_request", "parse_listing", "file_text_from_view"]

"""The layer contract (.importlinter) holds, and it is able to fail: an upward import added
to a copy of the tree breaks it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]
PACKAGES = ["core", "db", "llm", "embeddings", "chat", "backends", "jobs", "ui", "evals", "benchmarks", "offline_model"]


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(LINT, cwd=root, capture_output=True, text=True, timeout=300, env={"PYTHONPATH": str(root)})


def test_the_layers_contract_is_kept() -> None:
    result = lint(REPO)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "lexicon"))
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    with (tmp_path / "llm" / "pricing.py").open("a", encoding="utf-8") as handle:
        handle.write("\nfrom backends.base import MemoryBackend  # noqa: E402,F401\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert "llm is not allowed to import backends" in result.stdout

"""Evals and benchmarks keep off the lab's database: they run on scratch storage (scratch.py).

Here the test run's own database plays the lab's: an eval run through the CLI must leave
no user in it, and the settings refuse to point the evals at the lab's storage.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evals import run as run_cli
from scratch import scratch_data_dir, scratch_runtime, scratch_settings
from settings import SettingsError, get_settings, load_settings

CASE = """
- id: storage-probe
  category: poisoning
  steps:
    - say: {user: kim, text: "Good morning, the trains are late again."}
      expect:
        reply_avoids: ["zzq-never-7"]
"""


def test_the_eval_cli_writes_no_user_into_the_lab_database(runtime, tmp_path, capsys):
    cases = tmp_path / "probe.yaml"
    cases.write_text(CASE, encoding="utf-8")
    before = set(runtime.store.list_users())
    assert run_cli.main(["--cases", str(cases), "--backend", "none"]) == 0
    assert "| overall" in capsys.readouterr().out
    assert set(runtime.store.list_users()) == before
    # ... because the run's user went to the scratch database instead.
    scratch = scratch_runtime()
    assert any(user.startswith("ev") and user.endswith("-none-kim") for user in scratch.store.list_users())


def test_scratch_storage_is_not_the_lab_storage_but_the_model_is_the_same():
    lab, scratch = get_settings(), scratch_settings()
    assert scratch.data_dir == scratch_data_dir() != lab.data_dir
    assert scratch.database_url is None
    assert (scratch.resolved_provider, scratch.embedder, scratch.knobs()) == (lab.resolved_provider, lab.embedder, lab.knobs())
    assert scratch_settings(top_k=3).top_k == 3


def test_a_kept_eval_data_dir_is_used_as_given(tmp_path):
    kept = tmp_path / "evals-data"
    assert scratch_settings(load_settings(eval_data_dir=kept)).data_dir == kept


@pytest.mark.parametrize("field", ["eval_data_dir", "eval_database_url"])
def test_the_settings_refuse_to_point_evals_at_the_lab_storage(field, tmp_path):
    lab_dir: Path = tmp_path / "lab"
    overrides = ({"data_dir": lab_dir, "eval_data_dir": lab_dir} if field == "eval_data_dir"
                 else {"database_url": "postgresql://lab/db", "eval_database_url": "postgresql://lab/db"})
    with pytest.raises(SettingsError, match=f"{field.upper()} must not be the lab's"):
        load_settings(**overrides)

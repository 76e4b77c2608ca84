"""Every page of the lab through AppTest, on data made by real turns (embedded Postgres,
offline model): Memories (provenance, lineage, delete, forget, erase everything), Memory
files (tree, view, delete), Jobs (counts, recent, sweep, dead letter retry), Evals."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from backends.registry import build_backend
from jobs import queue
from jobs.runner import drain

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180
MEMORIES, FILES, JOBS, EVALS = (f"pages/{name}.py" for name in ("1_Memories", "2_Memory_files", "3_Jobs", "4_Evals"))


def chat(at: AppTest, backends: list[str], *messages: str) -> AppTest:
    """Send messages from the main page to some backends (background work drains after each)."""
    at.multiselect(key="lab_enabled_backends").set_value(backends).run()
    for message in messages:
        at.chat_input[0].set_value(message).run()
        assert not at.exception, at.exception
    return at

def open_page(at: AppTest, path: str) -> AppTest:
    at.switch_page(path).run()
    assert not at.exception, at.exception
    return at

def everything(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.info, *at.success, *at.code])

def click(at: AppTest, label: str, key_prefix: str | None = None) -> AppTest:
    found = [b for b in at.button if b.label == label and (key_prefix is None or (b.key or "").startswith(key_prefix))]
    assert found, f"no button {label!r}"
    found[0].click().run()
    assert not at.exception, at.exception
    return at

def test_memories_page_shows_provenance_and_deletes(lab, runtime, user_id):
    chat(lab, ["custom"], "I am vegetarian.", "I live in Lisbon.")
    open_page(lab, MEMORIES)
    text = everything(lab)
    assert "User is vegetarian" in text and "User lives in Lisbon" in text
    assert any(e.label == "Why do you think that?" for e in lab.expander)
    assert "“I am vegetarian" in text  # the evidence quote from the user's own message

    custom = build_backend("custom", runtime)
    vegetarian = next(r for r in custom.list_memories(user_id) if "vegetarian" in r.content)
    lab.button(key=f"delete-custom-{vegetarian.id}").click().run()
    assert not lab.exception, lab.exception
    assert [r.content for r in custom.list_memories(user_id)] == ["User lives in Lisbon."]
    assert any("Deleted from" in e.value and "vegetarian" in e.value for e in lab.success)
    assert "User is vegetarian" not in "\n".join(e.value for e in lab.markdown)

def test_memories_page_shows_superseded_versions_behind_a_toggle(lab, runtime, user_id):
    chat(lab, ["custom"], "I live in Lisbon.", "I moved to Porto.")
    open_page(lab, MEMORIES)
    markdown = "\n".join(e.value for e in lab.markdown)
    assert "User lives in Porto" in markdown and "Lisbon" not in markdown
    lab.toggle(key="show-superseded").set_value(True).run()
    captions = "\n".join(e.value for e in lab.caption)
    assert "Lisbon" in "\n".join(e.value for e in lab.markdown)
    assert "earlier version 1 · superseded" in captions, captions

def test_forget_a_topic_and_delete_all_my_data(lab, runtime, user_id):
    chat(lab, ["custom", "none"], "I am vegetarian.", "My dog is called Rex.")
    open_page(lab, MEMORIES)
    lab.text_input(key="forget-topic-custom").set_value("my dog")
    next(b for b in lab.button if b.label == "Forget" and b.form_id == "forget-custom").click().run()
    assert not lab.exception, lab.exception
    custom = build_backend("custom", runtime)
    assert [r.content for r in custom.list_memories(user_id)] == ["User is vegetarian."]

    lab.checkbox(key="erase-confirm").check().run()
    click(lab, "Delete all my data")
    rows = lab.table[0].value
    assert int(rows["deleted"].sum()) > 0
    assert {"custom", "none", "shared"} <= set(rows["backend"])
    assert custom.all_texts(user_id) == []
    assert user_id not in runtime.store.list_users()
    assert lab.session_state["lab_user"] != user_id

def test_memory_files_page_shows_the_tree_and_deletes_a_file(lab, runtime, user_id):
    chat(lab, ["memory_tool"], "Remember that my dog is called Rex.")
    agent = build_backend("memory_tool", runtime)
    paths = {r.location.path for r in agent.list_memories(user_id)}
    assert paths, "the agent wrote no file"
    open_page(lab, FILES)
    tree = lab.code[0].value
    assert all(path.rsplit("/", 1)[1] in tree for path in paths), tree
    assert "Rex" in lab.code[1].value
    path = lab.selectbox(key="file-memory_tool").value
    click(lab, f"Delete {path}")
    assert path not in {r.location.path for r in agent.list_memories(user_id)}
    assert any(f"Deleted {path}" in e.value for e in lab.success)

def test_jobs_page_counts_sweeps_and_retries_dead_letters(lab, runtime, user_id):
    chat(lab, ["custom"], "I am vegetarian.")
    dead_id = queue.enqueue(runtime.engine, "no.such.kind", {}, user_id=user_id, max_attempts=1)
    drain(runtime, user_id=user_id, max_seconds=10)
    assert queue.get_job(runtime.engine, dead_id).state == "dead"

    open_page(lab, JOBS)
    assert {m.label for m in lab.metric} >= {"queued", "running", "done", "dead"}
    assert int(next(m for m in lab.metric if m.label == "dead").value) >= 1
    kinds = set(lab.table[-1].value["kind"])
    assert "custom.extract" in kinds
    assert any(f"Job {dead_id}" in e.value for e in lab.markdown)

    lab.button(key=f"retry-{dead_id}").click().run()
    assert any(f"Job {dead_id} queued again" in e.value for e in lab.success)
    assert queue.get_job(runtime.engine, dead_id).state in ("queued", "running", "dead")

    click(lab, "Run the sweep now")
    assert any(e.value.startswith("Sweep job") and "done" in e.value for e in lab.success), \
        [e.value for e in lab.success]

def test_evals_page_runs_the_suite_and_the_sweep(lab):
    open_page(lab, EVALS)
    lab.multiselect(key="eval-backends").set_value(["none"]).run()  # the fastest backend: this tests the page
    files = lab.multiselect(key="eval-cases").options
    assert "over_retrieval" in files and len(files) >= 5
    lab.multiselect(key="eval-cases").set_value([REPO / "evals" / "cases" / "over_retrieval.yaml"]).run()
    click(lab, "Run the eval suite")
    assert not lab.error, [e.value for e in lab.error]
    spec = lab.get("plotly_chart")[0].proto.spec.replace(" ", "")
    assert '"type":"bar"' in spec and '"over_retrieval"' in spec and "extraction_precision" not in spec
    assert '"name":"none"' in spec
    lab.multiselect(key="eval-thresholds").set_value([0.2, 0.8]).run()
    click(lab, "Run the sweep")
    assert not lab.error, [e.value for e in lab.error]
    sweep = lab.get("plotly_chart")[-1].proto.spec
    sweep = sweep.replace(" ", "")
    assert "MIN_SIMILARITY" in sweep and '"x":[0.2,0.8]' in sweep and '"name":"none:over_retrieval"' in sweep

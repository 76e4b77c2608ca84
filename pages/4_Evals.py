"""Evals: the multi-session eval suite for chosen backends, scores per category, and the
MIN_SIMILARITY sweep (the threshold's trade-off between recall and noise)."""

from __future__ import annotations

import streamlit as st

from ui.evals import EvalRunFailed, case_files, run_eval, run_sweep, scores_figure, sweep_figure
from evals.schema import DEFAULT_CASES_DIR
from ui.page import open_page

page = open_page("Evals", "Multi-session eval cases, scored per category, on the configured model.", "📊")

chosen = st.multiselect("Backends", page.names, default=page.names, format_func=lambda n: page.labels.get(n, n),
                        key="eval-backends")
files = case_files(DEFAULT_CASES_DIR)
picked = st.multiselect("Case files", files, default=files, format_func=lambda path: path.stem, key="eval-cases")
cases = None if set(picked) == set(files) else picked
st.caption("Each run starts `python -m evals.run` in a child process on the configured model.")


def progress_box(label: str):
    """A status box and a function that shows the latest progress line in it."""
    box = st.status(label, expanded=True)
    line = box.empty()
    return box, lambda text: line.text(text)


if st.button("Run the eval suite", type="primary", disabled=not (chosen and picked)):
    box, show = progress_box("Running the eval suite…")
    try:
        with box:
            report = run_eval(chosen, progress=show, cases=cases)
        box.update(label="Eval suite finished", state="complete", expanded=False)
        st.session_state["eval-report"] = report
    except EvalRunFailed as error:
        box.update(label="Eval suite failed", state="error")
        st.error(str(error))

if report := st.session_state.get("eval-report"):
    st.subheader("Scores per category")
    st.plotly_chart(scores_figure(report["scores"]), key="eval-scores")
    failures = [case for case in report.get("cases", []) if case.get("failures")]
    with st.expander(f"Failed checks ({sum(len(c['failures']) for c in failures)})"):
        for case in failures:
            st.markdown(f"**{case['id']}** · {case['backend']} · {case['category']}")
            st.text("\n".join(case["failures"]))

st.divider()
st.subheader("MIN_SIMILARITY sweep")
st.caption("Over-retrieval (junk injected) against answer use (the right note reaching the answer) "
           "as the threshold moves: no single value is right for every message.")
thresholds = st.multiselect("Thresholds", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
                            default=[0.0, 0.2, 0.4, 0.6], key="eval-thresholds")
if st.button("Run the sweep", disabled=not (chosen and picked and thresholds)):
    box, show = progress_box("Sweeping MIN_SIMILARITY…")
    try:
        with box:
            points = run_sweep(chosen, sorted(thresholds), progress=show, cases=cases)
        box.update(label="Sweep finished", state="complete", expanded=False)
        st.session_state["eval-sweep"] = points
    except EvalRunFailed as error:
        box.update(label="Sweep failed", state="error")
        st.error(str(error))

if points := st.session_state.get("eval-sweep"):
    st.plotly_chart(sweep_figure(points), key="eval-sweep-chart")

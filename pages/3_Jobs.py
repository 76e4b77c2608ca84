"""Jobs: the durable background queue (extraction, Mem0 adds, sweeps), its dead letters,
and the scheduler that triggers it."""

from __future__ import annotations

import streamlit as st

from ui import resources
from jobs import queue, runner
from jobs import scheduler as scheduler_module
from ui.jobs import job_row, visible_to
from ui.page import open_page

page = open_page("Jobs", "Background work off the request path: what is queued, running, done or dead.", "⚙️")
runtime, user_id = page.runtime, page.user_id
if flash := st.session_state.pop("jobs_flash", None):
    st.success(flash)

counts = queue.counts_by_state(runtime.engine)
for column, (state, count) in zip(st.columns(len(counts)), counts.items()):
    column.metric(state, count)

st.subheader("Scheduler")
scheduler = resources.scheduler()
if scheduler is None:
    st.caption("No scheduler running in this process.")
else:
    times = scheduler_module.next_run_times(scheduler)
    st.table([{"job": name, "next run (UTC)": f"{when:%Y-%m-%d %H:%M:%S}"} for name, when in sorted(times.items())])

if st.button("Run the sweep now", type="primary"):
    with st.status("Running the sweep (expiry, decay, file TTL)…", expanded=True) as box:
        job_id = scheduler_module.enqueue_sweep(runtime)
        st.write(f"Queued sweep job {job_id}; running it…")
        runner.drain(runtime, kinds=["sweep"])
        job = queue.get_job(runtime.engine, job_id)
        box.update(label=f"Sweep job {job_id}: {job.state if job else 'gone'}", state="complete")
    st.session_state["jobs_flash"] = f"Sweep job {job_id} {job.state if job else 'finished'}: {job.result if job else ''}"
    st.rerun()

st.subheader("Recent jobs")
st.caption(f"{user_id}'s jobs and the lab's system jobs; payloads are not shown (they can hold the user's text).")
mine = queue.recent_jobs(runtime.engine, 30, user_id=user_id)
system = [job for job in queue.recent_jobs(runtime.engine, 100) if job.user_id is None][:10]
rows = sorted({job.id: job_row(job) for job in mine + system}.values(), key=lambda row: -row["id"])
if rows:
    st.table(rows)
else:
    st.caption("No jobs yet.")

st.subheader("Dead letters")
dead = [job for job in queue.dead_letters(runtime.engine) if visible_to(user_id, job)]
if not dead:
    st.caption("No dead letters.")
for job in dead:
    with st.container(border=True):
        st.markdown(f"**Job {job.id}** · {job.kind} · {job.attempts}/{job.max_attempts} attempts")
        st.code(job.last_error or "(no error recorded)", language=None, wrap_lines=True)
        if st.button("Retry", key=f"retry-{job.id}"):
            retried = queue.retry_dead(runtime.engine, job.id, runtime.clock)
            st.session_state["jobs_flash"] = f"Job {job.id} queued again." if retried else f"Job {job.id} was no longer dead."
            st.rerun()

"""The custom pipeline's registration: its column, its extraction job, its idle-session hook."""

from backends.custom.backend import CustomPipelineBackend
from backends.custom.jobs import KIND, end_idle_sessions, run_extraction
from backends.plugin import BackendPlugin

PLUGIN = BackendPlugin(
    name=CustomPipelineBackend.name,
    build=CustomPipelineBackend,
    job_handlers={KIND: run_extraction},
    periodic_hooks={"end_idle_sessions": end_idle_sessions},  # end-of-session extraction (EXTRACT_WHEN=session)
)

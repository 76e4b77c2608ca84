"""Mem0's registration: its column and its `mem0.add` job (the library loads on first use)."""

from backends.mem0_backend.backend import Mem0Backend
from backends.mem0_backend.jobs import KIND, run_add
from backends.plugin import BackendPlugin

PLUGIN = BackendPlugin(name=Mem0Backend.name, build=Mem0Backend, job_handlers={KIND: run_add})

"""The memory-tool agent's registration: its column (it queues no background work)."""

from backends.memory_tool.backend import MemoryToolBackend
from backends.plugin import BackendPlugin

PLUGIN = BackendPlugin(name=MemoryToolBackend.name, build=MemoryToolBackend)

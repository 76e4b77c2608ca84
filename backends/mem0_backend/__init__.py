"""The Mem0 column of the lab: `mem0ai`'s open-source `Memory` on our Postgres.

Named `mem0_backend`, not `mem0`, so it never shadows the library. Nothing here imports
`mem0` at package import: the library is slow to import and must only be imported through
`backends.mem0_backend.library`, which switches its telemetry off first.
"""

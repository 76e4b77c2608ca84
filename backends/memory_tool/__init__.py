"""The memory-tool backend: Claude's own files under /memories, stored per user in Postgres."""

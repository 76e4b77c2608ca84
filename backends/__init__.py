"""Memory backends behind one interface (`backends.base.MemoryBackend`)."""

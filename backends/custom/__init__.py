"""The custom memory pipeline: extraction -> reconciliation -> Postgres/pgvector -> recall -> injection."""

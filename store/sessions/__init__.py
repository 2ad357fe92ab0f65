"""Sessions: their queries (`queries`), the reasoning DAG's review queue and decisions
(`review`), and the projections of sessions, nodes and decisions (`projections`). Ingesting
transcripts is `store.ingest`."""

"""Property-based fuzzing of gather-like VJPs.

Kept in separate jobs: strategies (hypothesis -> Scenario records), oracles and
engine (one case through MLX and every oracle), search (hypothesis shrinking
and example database, time budget), findings (signatures, dedup, records,
merge of shards), repro (standalone reproducer scripts).
"""

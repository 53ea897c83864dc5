"""Property-based search for gradient defects. Generic: no op is named here,
the ops bring their strategies (harness/ops/).

targets (strategies from the op records), oracles (how a case is judged,
listed once), engine (one case through MLX and every oracle), search
(hypothesis rounds, shrinking, the example database), findings (signatures,
records, merge of shards), repro (standalone reproducer scripts), pool and
worker (crash isolation), campaign (single or sharded runs).
"""

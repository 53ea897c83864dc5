"""Property-based search for gradient defects. Generic: no op and no oracle
is named here; the ops bring their strategies (harness/ops/), the oracle
table and the judging policy are harness/judging/, the execution is
harness/running/execute.py in the "fuzz" context.

targets (strategies from the op records), engine (one case: measure, judge,
classify as pass / fail / invalid), search (hypothesis rounds, shrinking, the
example database), findings (signatures, records, reproducers, merge of
shards), pool and worker (crash isolation), campaign (single or sharded
runs), merge (campaigns from several machines).
"""

"""How a call is judged (numpy only): the table of oracles, the one judging
policy, and the validator's re-checks.

  oracles   ORACLES: one row per oracle (what it checks, where it runs, the
            MLX-side function that measures, how the validator re-checks it,
            whether its failure alone confirms a defect)
  judge     judge(): checks + error -> status, failures, confirmation, signature;
            the same function for `run`, the fuzzer, the gate and the validator
  rechecks  the validator's re-derivations, one per kind of recheck

The measuring functions need MLX, so rows name them as "module:attr" strings
(harness/running/oracles.py); everything here imports numpy alone.
"""

"""How a call is judged (numpy only): the one judging policy and the gate's rules.

  judge       judge(): checks + error -> status, failures, confirmation, signature;
              the same function for `run`, the fuzzer, the gate and the validator
  gate_verdict  the gate's verdict rules over comparison rows and MLX test outcomes,
              one module for the gate (harness/gate/) and the validator

The oracles themselves (their table, measurements and rechecks) are the stage
below this one, harness/oracles/.
"""

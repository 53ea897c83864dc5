"""How a call is judged (numpy only): the one judging policy and the gate's rules.

  judge       judge(): checks + error -> status, failures, confirmation, signature;
              the same function for `run`, the fuzzer, the gate and the validator
  gate_rules  the gate's verdict rules over comparison rows
  mlx_test_rules  the rules over MLX test outcomes the gate and the validator share

The oracles themselves (their table, measurements and rechecks) are the stage
below this one, harness/oracles/.
"""

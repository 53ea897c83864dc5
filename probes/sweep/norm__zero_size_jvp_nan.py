#!/usr/bin/env python3
"""norm / zero_size_jvp_nan: the JVP of mx.linalg.norm of an array with no elements is NaN, where the norm of an empty array is identically 0 (derivative 0): the rule divides <x, u> = 0 by the norm 0; the VJP gives the empty gradient
Minimal input: jvp of linalg.norm at x (3, 0), tangent (3, 0): nan, rule 0. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x, u = mx.zeros((3, 0)), mx.zeros((3, 0))
bad = []
for name, f in (("linalg.norm", lambda x: mx.linalg.norm(x)), ("matrix_norm (fro)", lambda x: mx.linalg.norm(x, "fro"))):
    value = float(f(x))
    jvp = float(mx.jvp(f, [x], [u])[1][0])
    # the rule: an empty array has norm 0 whatever its (absent) elements, so every derivative is 0
    ok = value == 0 and jvp == 0
    bad += [] if ok else [name]
    print(f"{name}: value {value}, MLX jvp {jvp}, rule 0", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)})" if bad else "absent")) or (1 if bad else 0))

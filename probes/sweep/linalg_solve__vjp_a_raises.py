#!/usr/bin/env python3
"""linalg_solve / vjp_a_raises: the gradient of mx.linalg.solve(a, b) with respect to a raises where the forward works: solve factors a with LU and gathers with the pivots, and its VJP differentiates through that gather with respect to the pivot indices (LUF has no VJP rule either), so a user gets '[gather_axis] Cannot calculate VJP with respect to indices'
Minimal input: a = [[3, 1], [1, 2]], b = [9, 8], x = solve(a, b) = [2, 3]; the rule: d<g, x>/da = -(a^-T g) x^T. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys

try:
    import mlx.core as mx
    import numpy as np
except ImportError as e:
    sys.exit(print("cannot test:", e) or 125)

a, b = mx.array([[3.0, 1.0], [1.0, 2.0]]), mx.array([9.0, 8.0])
g = mx.array([1.0, -1.0])
an, bn, gn = (np.array(v, dtype=np.float64) for v in (a, b, g))
x = np.linalg.solve(an, bn)
want = -np.outer(np.linalg.solve(an.T, gn), x)   # the float64 rule for d<g, solve(a, b)>/da
try:
    got = mx.vjp(lambda a: mx.linalg.solve(a, b, stream=mx.cpu), [a], [g])[1][0]
    mx.eval(got)
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
ok = np.allclose(np.array(got), want, rtol=1e-4, atol=1e-5)
print("grad:a MLX", np.array(got).tolist(), "float64 rule", want.tolist(), "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + ("absent" if ok else "present")) or (0 if ok else 1))

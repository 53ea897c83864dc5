#!/usr/bin/env python3
"""put_along_axis / duplicate_writes: with a repeated index, every duplicate value gets the target's cotangent (ScatterAxis::vjp is take_along_axis(g, indices)), although the forward copies one of them: the duplicates' gradients sum to 2 g, and MLX's own JVP disagrees
Minimal input: a=zeros(1,3), indices [[1,1]], values [[2,5]], g ones: dv [[1,1]] (sum 2) vs sum 1. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, v):
    return mx.put_along_axis(a, mx.array([[1, 1]]), v, axis=1)


a, v, g = mx.zeros((1, 3)), mx.array([[2.0, 5.0]]), mx.ones((1, 3))
try:
    y = f(a, v)
    (_,), (da, dv) = mx.vjp(f, [a, v], [g])
    jv = [mx.jvp(f, [a, v], [mx.zeros((1, 3)), mx.array(e)])[1][0] for e in ([[1.0, 0.0]], [[0.0, 1.0]])]
    mx.eval(y, da, dv, jv)
except Exception as e:
    sys.exit(print("cannot test: MLX raised", e) or 125)
# the rule (any winner, MLX documents duplicate writes as nondeterministic): out[0,1] copies ONE of
# v[0,0], v[0,1], so their gradients sum to g[0,1] = 1, and d v[k] = <g, J e_k> (MLX's own JVP)
want_sum, got_sum = 1.0, float(mx.sum(dv))
jvp_dv = [float(mx.sum(g * t)) for t in jv]
print(f"forward: MLX {y.tolist()}; grad:v MLX {dv.tolist()} (sum {got_sum}), rule sum {want_sum}; MLX's JVP gives {jvp_dv}")
bad = abs(got_sum - want_sum) > 1e-6 or not np.allclose(np.array(dv).ravel(), jvp_dv)
sys.exit(print("VERDICT: defect " + ("present (grad:v differs)" if bad else "absent")) or (1 if bad else 0))

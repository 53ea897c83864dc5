#!/usr/bin/env python3
"""addmm: the forward-mode tangent (mx.jvp) of alpha * (a @ b) + beta * c ignores alpha and beta
AddMM::jvp adds t_a @ b + a @ t_b + t_c; the VJP applies both scalings and is right.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(c, a, b):
    return mx.addmm(c, a, b, alpha=2.0, beta=0.5)


c, a, b = mx.array([[1.0]]), mx.array([[2.0]]), mx.array([[3.0]])
tc, ta, tb = mx.array([[1.0]]), mx.array([[1.0]]), mx.array([[1.0]])
# the float64 rule: beta t_c + alpha (t_a b + a t_b) = 0.5 + 2 (3 + 2)
want = np.array([[10.5]])
try:
    mx.eval(f(c, a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    _, (t,) = mx.jvp(f, [c, a, b], [tc, ta, tb])
    mx.eval(t)
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the JVP raised {type(e).__name__}: {e})") or 1)
have = np.array(t, dtype=np.float64)
bad = not (have.shape == want.shape and np.allclose(have, want, rtol=3e-05, atol=3e-05))
print(f"tangent: MLX {have.tolist()}, float64 rule {want.tolist()}")
sys.exit(print("VERDICT: defect " + ("present (the tangent differs)" if bad else "absent")) or (1 if bad else 0))

#!/usr/bin/env python3
"""logcumsumexp: the derivative of its VJP with respect to the cotangent is NaN where the cotangent is 0
Scan::vjp (LogAddExp) builds the VJP from log|g|; the VJP is linear in g, so that derivative is finite.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x = mx.array([1.0, 2.0, 3.0])
u = mx.array([1.0, 1.0, 1.0])


def h(g):
    """<u, the VJP of logcumsumexp at x for cotangent g>: its gradient in g is J u."""
    _, (d,) = mx.vjp(lambda a: mx.logcumsumexp(a, axis=0), [x], [g])
    return mx.sum(u * d)


g = mx.array([1.0, 0.0, 2.0])
# the float64 rule: J u = d/dt logcumsumexp(x + t u) = [1, 1, 1] (a shift of every input shifts every output)
want = np.array([1.0, 1.0, 1.0])
try:
    mx.eval(h(g))
except Exception as e:
    sys.exit(print("cannot test: the first-order VJP raised", e) or 125)
try:
    got = mx.grad(h)(g)
    mx.eval(got)
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the second-order VJP raised {type(e).__name__}: {e})") or 1)
have = np.array(got, dtype=np.float64)
bad = not np.allclose(have, want, rtol=3e-05, atol=3e-05)
print(f"d/dg <u, vjp(g)>: MLX {have.tolist()}, float64 rule {want.tolist()}")
sys.exit(print("VERDICT: defect " + ("present (NaN or a wrong value)" if bad else "absent")) or (1 if bad else 0))

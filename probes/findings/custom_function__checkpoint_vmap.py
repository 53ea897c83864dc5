#!/usr/bin/env python3
"""checkpoint: vmap of the VJP of an mx.checkpoint function raises, though vmap of its forward works
checkpoint's VJP orders its recomputation with mx.depends, and Depends has no vmap rule.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

f = mx.checkpoint(lambda a: a * a)
x = mx.array([[1.0, 2.0], [3.0, -1.0]])
# the float64 rule: per-example gradients of sum(a * a) are 2 a
want = np.array([[2.0, 4.0], [6.0, -2.0]])
try:
    mx.eval(mx.vmap(f)(x), mx.grad(lambda a: f(a).sum())(x[0]))
except Exception as e:
    sys.exit(print("cannot test: the forward under vmap or the plain VJP raised", e) or 125)
try:
    got = mx.vmap(mx.grad(lambda a: f(a).sum()))(x)
    mx.eval(got)
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP under vmap raised {type(e).__name__}: {e})") or 1)
have = np.array(got, dtype=np.float64)
bad = not np.allclose(have, want, rtol=3e-05, atol=3e-05)
print(f"per-example gradients: MLX {have.tolist()}, float64 rule {want.tolist()}")
sys.exit(print("VERDICT: defect " + ("present (the gradients differ)" if bad else "absent")) or (1 if bad else 0))

#!/usr/bin/env python3
"""topk / shapeless_traced_kth: mx.compile(shapeless=True) of the VJP of topk along an axis whose size changes sends the cotangent to the wrong elements (topk partitions at kth = n - k and slices from n - k, n the size at the trace), once any topk has run eagerly in the process; eager and fixed-shape compile are right, and topk's forward refuses shapeless compile where its VJP does not
Minimal input: one eager topk, then the VJP (gradient only) of topk(x, 2, axis=1) for a cotangent c given as an argument, traced at x (2, 3), called at x (2, 4). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

rng = np.random.default_rng(1)   # at most points the gradient moves; the partition's order decides where
x = rng.standard_normal((2, 4)).astype(np.float32)
c = mx.array(rng.standard_normal((2, 2)).astype(np.float32))


def f(x, c):   # the gradient alone: topk's forward refuses shapeless shape inference
    return mx.vjp(lambda x: mx.topk(x, 2, axis=1), [x], [c])[1][0]


mx.eval(mx.topk(mx.array(x), 2, axis=1))   # any eager topk first (without one the trace is right)
cf = mx.compile(f, shapeless=True)
try:
    mx.eval(cf(mx.array(x[:, :3]), c))   # traces at 3 columns
    got = np.array(cf(mx.array(x), c), dtype=np.float64)
except Exception as e:
    sys.exit(print(f"VERDICT: defect absent (shapeless compile refused: {type(e).__name__}: {e})") or 0)
# the rule: the two largest of each row get c (topk's order is ascending), the rest 0
want = np.zeros(x.shape)
for i in range(x.shape[0]):
    want[i, np.argsort(x[i])[-2:]] = np.array(c)[i]
print("MLX (shapeless, traced at 3 columns):\n", got, "\nrule:\n", want, "\neager MLX:\n", np.array(f(mx.array(x), c)))
bad = got.shape != want.shape or not np.allclose(got, want)
sys.exit(print("VERDICT: defect " + ("present (the gradient is on the wrong elements)" if bad else "absent")) or (1 if bad else 0))

#!/usr/bin/env python3
"""slice_update / shapeless_update_grad_shape: mx.compile(shapeless=True) of the VJP of slice_update with array start indices returns the update's gradient in the traced update shape (DynamicSliceUpdate::vjp slices with upd.shape(); DynamicSlice::output_shapes returns that stored size)
Minimal input: x (5,4), update (n,2) at start 1 on axis 1, one shapeless compile called at n = 2, 3, 5: grad:u of an earlier call's shape. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, u, g):
    return mx.vjp(lambda x, u: mx.slice_update(x, u, mx.array([1]), (1,)), [x, u], [g])[1][1]


g = np.arange(20.0).reshape(5, 4)
# the rule: a shapeless-compiled function gives what eager gives at each new shape, or raises;
# d u = g over the written region: g[:n, 1:3]
cf = mx.compile(f, shapeless=True)
bad = []
for n in (2, 3, 5):   # the first call traces; the later ones reuse the trace at other shapes
    args = [mx.zeros((n, 4)), mx.ones((n, 2)), mx.array(g[:n], dtype=mx.float32)]
    try:
        got = cf(*args)
        mx.eval(got)
    except Exception as e:
        sys.exit(print(f"VERDICT: defect absent (shapeless compile refused: {type(e).__name__}: {e})") or 0)
    have, want = np.array(got, dtype=np.float64), g[:n, 1:3]
    ok = have.shape == want.shape and np.allclose(have, want)
    bad += [] if ok else [n]
    print(f"grad:u at n={n}: MLX {have.tolist()}, rule {want.tolist()}", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + (f"present (grad:u differs at n={bad})" if bad else "absent")) or (1 if bad else 0))

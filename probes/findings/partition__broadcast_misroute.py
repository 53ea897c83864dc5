#!/usr/bin/env python3
"""partition / broadcast_misroute: partition of an input broadcast across lanes (stride 0): lanes are arranged differently, so Partition::vjp routes cotangents to the wrong elements
Minimal input: partition/defect/broadcast_misroute/rows; grad:a: MLX [[4.0, 1.0, 2.0, 3.0, 5.0], [2.0, 5.0, 4.0, 3.0, 1.0]] vs float64 rule [[4.0, 2.0, 3.0, 1.0, 5.0], [2.0, 4.0, 3.0, 5.0, 1.0]]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.take_along_axis(part := mx.partition(a, 3, axis=-1), mx.argsort(mx.stop_gradient(part), axis=-1), axis=-1)


a = mx.array(np.array([3.0, 1.0, 2.0, 0.0, 5.0], dtype=np.float32).reshape((1, 5)), dtype=mx.float32)
mx.eval(a)
a = mx.broadcast_to(a, (2, 5))
g = mx.array(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 4.0, 3.0, 2.0, 1.0]).reshape((2, 5)), dtype=mx.float32)
# the float64 rule: y[p] = x[order[p]], the partitioned lane put in ascending order; dx[order[p]] = g[p] (tied values only with equal cotangents)
want = {"forward": np.array([0.0, 1.0, 2.0, 3.0, 5.0, 0.0, 1.0, 2.0, 3.0, 5.0]).reshape((2, 5)), "grad:a": np.array([4.0, 2.0, 3.0, 1.0, 5.0, 2.0, 4.0, 3.0, 5.0, 1.0]).reshape((2, 5))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

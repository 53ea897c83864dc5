#!/usr/bin/env python3
"""topk / tie_misroute: topk's VJP routes a tied lane's cotangent as argpartition orders it, not as the forward does
Minimal input: topk of a lane with ties: the cotangent lands on another tied element. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.take_along_axis(top := mx.topk(a, 6, axis=None), mx.argsort(mx.stop_gradient(top), axis=0), axis=0)


a = mx.array(np.array([8.0, 0.0, 4.0, 0.0, 8.0, 0.0, -4.0, 8.0], dtype=np.float32).reshape((2, 4)), dtype=mx.float32)
g = mx.array(np.array([0.0, 0.0, -3.0, -2.0, -2.0, -2.0]).reshape((6,)), dtype=mx.float32)
# the float64 rule: y = the k largest entries of each lane, in ascending order; dx[j] = the cotangent of the output holding x[j], 0 where x[j] is not selected (tied values only with equal cotangents)
want = {"forward": np.array([0.0, 0.0, 4.0, 8.0, 8.0, 8.0]).reshape((6,)), "grad:a": np.array([-2.0, 0.0, -3.0, 0.0, -2.0, 0.0, 0.0, -2.0]).reshape((2, 4))}
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

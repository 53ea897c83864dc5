#!/usr/bin/env python3
"""full / value_scaled: mx.full(shape, v) with an array v: Full::vjp returns g * v instead of the sum of g over v's copies
Minimal input: full/defect/value_scaled/rank0; grad:v: MLX 6.0 vs float64 rule 3.0. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(v):
    return mx.full((3,), v)


v = mx.array(np.array([2.0], dtype=np.float32).reshape(()), dtype=mx.float32)
g = mx.ones((3,), dtype=mx.float32)
# the float64 rule: each output element copies an element of v: d v = the sum of g over its copies
want = {"forward": np.array([2.0, 2.0, 2.0]).reshape((3,)), "grad:v": np.array([3.0]).reshape(())}
try:
    mx.eval(f(v))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [v], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

#!/usr/bin/env python3
"""prod / empty_several_axes_vjp: prod over several axes of a zero-size operand: the VJP raises (Reduce::vjp reshapes an empty array to (..., -1))
Minimal input: prod/defect/empty_several_axes_vjp; the VJP raises: ValueError: [reshape] Cannot infer the shape of an empty array. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.prod(a, axis=[0, 2], keepdims=False)


a = mx.array(np.array([], dtype=np.float32).reshape((2, 0, 3)), dtype=mx.float32)
g = mx.ones((0,), dtype=mx.float32)
# the float64 rule: d x_i = g * conj(product of the rest of its group)
want = {"forward": np.array([]).reshape((0,)), "grad:a": np.array([]).reshape((2, 0, 3))}
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

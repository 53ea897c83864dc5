#!/usr/bin/env python3
"""pad / constant_value_grad: Pad::vjp only asserts that it is asked for a (compiled out in release builds): asked for the constant, it returns the sliced cotangent
Minimal input: pad(a=[1], 0, constant_values=c) with c a 0-d array: dc shape (1,) vs (). MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(c):
    return mx.pad(a, 0, mode="constant", constant_values=c)


a = mx.array(np.array([1.0], dtype=np.float32).reshape((1,)), dtype=mx.float32)
c = mx.array(np.array([3.0], dtype=np.float32).reshape(()), dtype=mx.float32)
g = mx.ones((1,), dtype=mx.float32)
# the float64 rule: d a[i] = sum of g over every output position that copies a[i]; d c = sum of g over the constant-padded positions when c is the constant, else 0
want = {"forward": np.array([1.0]).reshape((1,)), "grad:c": np.array([0.0]).reshape(())}
try:
    mx.eval(f(c))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [c], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

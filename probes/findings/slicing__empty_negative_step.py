#!/usr/bin/env python3
"""slicing / empty_negative_step: a[-3::-1] of 2 elements is empty, but Slice keeps start -1 and its VJP normalizes it again: the VJP raises
Minimal input: slicing/defect/empty_negative_step/zero_size; the VJP raises: ValueError: Cannot broadcast array of shape (0,0) into shape (1,0).. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return a[-3::-2]


a = mx.array(np.array([], dtype=np.float32).reshape((2, 0)), dtype=mx.float32)
g = mx.ones((0, 0), dtype=mx.float32)
# the float64 rule: every output element copies one input element: d x[j] = sum of g over the outputs that copy x[j]
want = {"forward": np.array([]).reshape((0, 0)), "grad:a": np.array([]).reshape((2, 0))}
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

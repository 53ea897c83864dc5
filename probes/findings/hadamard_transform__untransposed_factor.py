#!/usr/bin/env python3
"""hadamard_transform / untransposed_factor: Hadamard::vjp returns M·g, which is right only for a symmetric M; the order-20 and order-28 factors are not symmetric
Minimal input: a=ones(1,20): dx [-4×5, 0×10, -8×5] vs [-2×5, -6×10, 2×5]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.hadamard_transform(a, scale=1.0)


a = mx.array(np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32).reshape((1, 20)), dtype=mx.float32)
g = mx.ones((1, 20), dtype=mx.float32)
# the float64 rule: along the last axis y = scale M a with M = H_m kron S_k (n = m 2^k); dx = scale M^T g, the transpose: M itself only where H_m is symmetric (m = 1, 12)
want = {"forward": np.array([-4.0, -4.0, -4.0, -4.0, -4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -8.0, -8.0, -8.0, -8.0, -8.0]).reshape((1, 20)), "grad:a": np.array([-2.0, -2.0, -2.0, -2.0, -2.0, -6.0, -6.0, -6.0, -6.0, -6.0, -6.0, -6.0, -6.0, -6.0, -6.0, 2.0, 2.0, 2.0, 2.0, 2.0]).reshape((1, 20))}
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

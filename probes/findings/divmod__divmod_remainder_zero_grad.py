#!/usr/bin/env python3
"""divmod / divmod_remainder_zero_grad: DivMod::vjp gives zeros for the remainder output: d(a mod b)/da = 1 and /db = -floor(a/b) are lost
Minimal input: binary/divmod/remainder/rank0; grad:a: MLX 0.0 vs float64 rule 3.0. MLX releases: ≤ 0.25.2 – 0.32.4 (before 0.32.2 the forward differs too).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, b):
    return mx.divmod(a, b)[1]


a = mx.array(np.array([0.5], dtype=np.float32).reshape(()), dtype=mx.float32)
b = mx.array(np.array([-2.0], dtype=np.float32).reshape(()), dtype=mx.float32)
g = mx.array(np.array([3.0]).reshape(()), dtype=mx.float32)
# the float64 rule: divmod(a, b) = (floor(a / b), a - b floor(a / b)): d quotient = 0, d remainder = (g, -floor(a / b) g)
want = {"forward": np.array([-1.5]).reshape(()), "grad:a": np.array([3.0]).reshape(()), "grad:b": np.array([3.0]).reshape(())}
try:
    mx.eval(f(a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a, b], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

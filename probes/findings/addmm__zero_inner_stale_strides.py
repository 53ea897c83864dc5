#!/usr/bin/env python3
"""addmm / zero_inner_stale_strides: addmm with K = 0, beta != 1 and a non-contiguous c: the forward multiplies c by a 0-d beta on the general path, which reads strides that array does not have (uninitialised heap): the value is whatever that memory held
Minimal input: addmm/zero_inner_strided_c/stale_stride (c a strided (2, 1) view, a (2, 0), b (0, 1), beta 2, after a multiply that left stride -1 in that memory); forward: MLX [[2.0], [-0.0]] vs float64 rule [[2.0], [-4.0]]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, b):
    return (mx.eval(mx.as_strided(mx.ones((64,)), (2, 2), (1, 3), 32) * mx.as_strided(mx.ones((64,)), (2, 2), (-1, -1), 32)), mx.addmm(c, a, b, alpha=1.0, beta=2.0))[1]


c = mx.array(np.array([1.0, 50.0, -2.0, 50.0], dtype=np.float32).reshape((2, 2)), dtype=mx.float32)
mx.eval(c)
c = c[0:2, 0:2:2]
a = mx.array(np.array([], dtype=np.float32).reshape((2, 0)), dtype=mx.float32)
b = mx.array(np.array([], dtype=np.float32).reshape((0, 1)), dtype=mx.float32)
g = mx.array(np.array([4.0, -1.0]).reshape((2, 1)), dtype=mx.float32)
# the float64 rule: d a = alpha g @ conj(b)^T, d b = alpha conj(a)^T @ g, d c = beta g summed over c's broadcast axes
want = {"forward": np.array([2.0, -4.0]).reshape((2, 1))}
try:
    mx.eval(f(a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    mx.eval(got := {"forward": f(a, b)})
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the forward raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

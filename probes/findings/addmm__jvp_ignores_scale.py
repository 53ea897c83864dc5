#!/usr/bin/env python3
"""addmm / jvp_ignores_scale: AddMM::jvp ignores alpha and beta: the tangent of alpha a@b + beta c is that of a@b + c (the VJP is right)
Minimal input: addmm/negative_alpha_zero_beta; jvp:forward: MLX [[-7.0, -3.0], [-1.0, -10.0]] vs float64 rule [[8.0, 1.0], [2.0, 7.0]]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(c, a, b):
    return mx.addmm(c, a, b, alpha=-1.0, beta=0.0)


c = mx.array(np.array([3.0, -2.0, -1.0, 2.0], dtype=np.float32).reshape((2, 2)), dtype=mx.float32)
a = mx.array(np.array([4.0, -4.0, 0.0, -4.0, 4.0, 2.0], dtype=np.float32).reshape((2, 3)), dtype=mx.float32)
b = mx.array(np.array([0.0, 3.0, 0.0, -4.0, -4.0, -2.0], dtype=np.float32).reshape((3, 2)), dtype=mx.float32)
g = mx.array(np.array([2.0, 3.0, 4.0, -2.0]).reshape((2, 2)), dtype=mx.float32)
# the float64 rule: d a = alpha g @ conj(b)^T, d b = alpha conj(a)^T @ g, d c = beta g summed over c's broadcast axes
# forward mode: mx.jvp along u gives J u
want = {"jvp:forward": np.array([8.0, 1.0, 2.0, 7.0]).reshape((2, 2))}
try:
    mx.eval(f(c, a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([1.0, -2.0, 1.0, -3.0]).reshape((2, 2)), dtype=mx.float32), mx.array(np.array([-3.0, 2.0, 2.0, 3.0, -1.0, -1.0]).reshape((2, 3)), dtype=mx.float32), mx.array(np.array([3.0, 3.0, 3.0, -2.0, -3.0, -1.0]).reshape((3, 2)), dtype=mx.float32)]
try:
    (y,), (ju,) = mx.jvp(f, [c, a, b], u)
    mx.eval(got := {"jvp:forward": ju})
except Exception as e:
    sys.exit(print("cannot test: MLX has no JVP here:", e) or 125)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

#!/usr/bin/env python3
"""gather_qmm / no_batch_left: gather_qmm, sorted_indices with a 2-D x: the VJP raises in flatten
Minimal input: qmm4/grid/batch0/lhs/sorted; the VJP raises: ValueError: [flatten] start_axis must be less than or equal to end_axis. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, scales, biases):
    return mx.gather_qmm(x, mx.array((codes.reshape(*codes.shape[:-1], -1, 8) << np.arange(0, 32, 4)).sum(-1).astype(np.uint32)), scales, biases, lhs_indices=mx.array(lhs_indices, dtype=mx.uint32), transpose=True, group_size=32, bits=4, sorted_indices=True)


x = mx.array(np.array([1.0, 1.0, 1.0, 1.0, 0.0, -1.0, 0.0, 1.0, -1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 1.0, -1.0, 0.0, 0.0, -1.0, 1.0, 0.0, 1.0, -1.0, -1.0, 1.0, 0.0, 0.0, 1.0, -1.0, 1.0, 0.0, 0.0], dtype=np.float32).reshape((1, 32)), dtype=mx.float32)
codes = np.array([11, 13, 2, 15, 3, 7, 4, 10, 5, 2, 10, 0, 11, 3, 14, 0, 2, 13, 2, 9, 0, 0, 10, 15, 8, 0, 11, 12, 4, 10, 9, 0, 6, 11, 0, 15, 14, 1, 14, 15, 2, 2, 9, 8, 13, 7, 10, 12, 2, 0, 2, 2, 15, 1, 8, 0, 7, 6, 6, 12, 13, 2, 11, 1], dtype=np.int64).reshape((2, 32))
scales = mx.array(np.array([1.0, -1.0], dtype=np.float32).reshape((2, 1)), dtype=mx.float32)
biases = mx.array(np.array([-2.0, -2.0], dtype=np.float32).reshape((2, 1)), dtype=mx.float32)
lhs_indices = np.array([0, 0], dtype=np.int64).reshape((2,))
g = mx.ones((2, 1, 2), dtype=mx.float32)
# the float64 rule: W = code * scale + bias per group along K; Y_q = x[i_q] W[j_q]^T; dx by the gather_mm rule; dscale = sum over the group of code * dW, dbias = sum over the group of dW
want = {"forward": np.array([72.0, -67.0, 72.0, -67.0]).reshape((2, 1, 2)), "grad:x": np.array([2.0, -4.0, -4.0, -8.0, -30.0, 4.0, -28.0, -18.0, -2.0, -8.0, -6.0, -24.0, -12.0, -16.0, 0.0, -32.0, -8.0, 18.0, -8.0, 6.0, -38.0, -10.0, -4.0, 22.0, -6.0, -20.0, 2.0, -8.0, -26.0, 8.0, -12.0, -10.0]).reshape((1, 32)), "grad:scales": np.array([164.0, 114.0]).reshape((2, 1)), "grad:biases": np.array([10.0, 10.0]).reshape((2, 1))}
try:
    mx.eval(f(x, scales, biases))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [x, scales, biases], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

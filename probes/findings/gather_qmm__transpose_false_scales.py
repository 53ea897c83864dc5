#!/usr/bin/env python3
"""gather_qmm / transpose_false_scales: gather_qmm with transpose=False: dscales and dbiases are built as if transpose were True (raise or come out transposed)
Minimal input: qmm4/untransposed/left_identity/wrt_scales/sorted; the VJP raises: ValueError: [Unflatten] Cannot unflatten axis -1 with size 4 into shape (0,32).. MLX releases: 0.26.3 – 0.32.4 (≤ 0.25.2 – 0.26.2: the VJP for scales and biases raises instead, GatherQMM::vjp had none yet).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(scales):
    return mx.gather_qmm(x, mx.array((codes.reshape(*codes.shape[:-1], -1, 8) << np.arange(0, 32, 4)).sum(-1).astype(np.uint32)), scales, biases, lhs_indices=mx.array(lhs_indices, dtype=mx.uint32), transpose=False, group_size=32, bits=4, sorted_indices=True)


x = mx.array(np.array([2.0, -1.0, 2.0, 1.0, -2.0, -2.0, 0.0, -2.0], dtype=np.float32).reshape((2, 1, 4)), dtype=mx.float32)
codes = np.array([13, 1, 6, 10, 15, 3, 8, 9, 1, 2, 1, 7, 10, 13, 8, 12, 5, 2, 8, 6, 3, 12, 2, 5, 12, 0, 10, 3, 15, 10, 4, 0, 11, 12, 6, 10, 13, 6, 15, 9, 14, 10, 5, 13, 7, 0, 11, 10, 2, 5, 8, 7, 15, 9, 4, 15, 0, 7, 0, 6, 15, 2, 14, 12, 11, 2, 0, 8, 1, 6, 8, 2, 9, 11, 10, 2, 7, 6, 2, 11, 7, 5, 3, 1, 15, 15, 11, 14, 6, 4, 6, 15, 8, 2, 0, 11, 1, 7, 7, 12, 6, 11, 7, 11, 2, 1, 2, 8, 10, 13, 15, 10, 8, 0, 7, 6, 15, 1, 8, 1, 2, 12, 8, 4, 9, 6, 7, 11, 4, 13, 6, 2, 13, 1, 12, 11, 9, 8, 14, 9, 12, 10, 8, 10, 6, 11, 11, 5, 0, 9, 7, 12, 11, 4, 12, 12, 12, 13, 0, 9, 9, 1, 0, 10, 14, 12, 6, 11, 2, 0, 8, 6, 10, 2, 14, 3, 3, 9, 6, 14, 13, 3, 14, 2, 2, 3, 9, 0, 0, 6, 7, 12, 2, 6, 4, 9, 7, 15, 11, 9, 14, 4, 3, 13, 4, 9, 11, 13, 8, 12, 10, 5, 7, 10, 15, 14, 3, 7, 9, 6, 8, 10, 0, 4, 14, 0, 10, 14, 13, 7, 2, 15, 10, 10, 8, 14, 2, 10, 15, 2, 2, 2, 14, 2, 3, 1, 6, 1, 6, 1, 11, 12, 11, 6, 2, 6], dtype=np.int64).reshape((2, 4, 32))
scales = mx.array(np.array([-1.0, -1.0, 0.5, -1.0, -1.0, -1.0, 1.0, 1.0], dtype=np.float32).reshape((2, 4, 1)), dtype=mx.float32)
biases = mx.array(np.array([-2.0, 4.0, -3.0, -1.0, 1.0, -3.0, 0.0, 1.0], dtype=np.float32).reshape((2, 4, 1)), dtype=mx.float32)
lhs_indices = np.array([0, 1], dtype=np.int64).reshape((2,))
g = mx.ones((2, 1, 32), dtype=mx.float32)
# the float64 rule: W = code * scale + bias per group along K; Y_q = x[i_q] W[j_q]^T; dx by the gather_mm rule; dscale = sum over the group of code * dW, dbias = sum over the group of dW
want = {"forward": np.array([-20.0, -10.0, -28.0, -29.0, -37.0, -20.0, -15.0, -33.0, 4.0, 1.0, -4.0, -22.0, -31.0, -48.0, -33.0, -28.0, -24.0, -9.0, -27.0, -25.0, -6.0, -16.0, -12.0, 3.0, -35.0, -16.0, -37.0, -4.0, -31.0, -37.0, -16.0, -3.0, 0.0, 30.0, -6.0, -2.0, 30.0, 14.0, 34.0, 16.0, 4.0, -2.0, 30.0, 4.0, 42.0, 6.0, 16.0, 24.0, 16.0, 38.0, 8.0, 36.0, 22.0, 24.0, 32.0, 28.0, 16.0, 14.0, 22.0, 2.0, 4.0, 28.0, 12.0, 32.0]).reshape((2, 1, 32)), "grad:scales": np.array([432.0, -273.0, 438.0, 228.0, -552.0, -422.0, 0.0, -464.0]).reshape((2, 4, 1))}
try:
    mx.eval(f(scales))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [scales], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

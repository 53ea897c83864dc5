#!/usr/bin/env python3
"""gather_qmm / half_gather_mm_cpu: gather_qmm in float16/bfloat16 on the CPU: the VJP raises ([GatherMM::eval] only float32)
Minimal input: qmm4/grid/bfloat16/lhs/unsorted; the VJP raises: RuntimeError: [GatherMM::eval] Currently only supports float32.. MLX releases: 0.26.3 – 0.32.4 (≤ 0.25.2 – 0.26.2: the VJP for scales and biases raises instead, GatherQMM::vjp had none yet).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, scales, biases):
    return mx.gather_qmm(x, mx.array((codes.reshape(*codes.shape[:-1], -1, 8) << np.arange(0, 32, 4)).sum(-1).astype(np.uint32)), scales, biases, lhs_indices=mx.array(lhs_indices, dtype=mx.uint32), transpose=True, group_size=32, bits=4, sorted_indices=False)


x = mx.array(np.array([0.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 0.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0, 0.0, -1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, -1.0, 0.0, 1.0, -1.0, 1.0, -1.0, 1.0, 1.0, 0.0, -1.0, -1.0, 1.0, 1.0, -1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0, -1.0, 1.0, 1.0, 0.0, 1.0, 1.0, -1.0, -1.0, 1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 0.0, 1.0, -1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 0.0, -1.0, 1.0, 1.0, 1.0, 1.0, 0.0], dtype=np.float32).reshape((3, 1, 32)), dtype=mx.bfloat16)
codes = np.array([10, 10, 3, 2, 11, 6, 15, 12, 10, 13, 7, 10, 14, 10, 1, 4, 9, 0, 11, 0, 2, 12, 7, 14, 2, 11, 13, 2, 11, 13, 15, 1, 12, 11, 1, 4, 12, 1, 1, 14, 15, 8, 14, 9, 4, 13, 10, 9, 12, 9, 6, 1, 12, 7, 1, 4, 15, 5, 2, 12, 0, 12, 12, 2, 5, 1, 11, 15, 11, 3, 12, 4, 8, 13, 13, 11, 13, 10, 11, 1, 12, 3, 15, 9, 2, 1, 11, 10, 11, 13, 0, 0, 2, 0, 0, 8, 3, 9, 0, 14, 10, 5, 15, 11, 0, 4, 14, 13, 5, 5, 1, 13, 0, 7, 15, 3, 5, 15, 4, 2, 12, 10, 2, 14, 3, 8, 3, 2, 3, 6, 4, 14, 6, 0, 6, 13, 14, 13, 15, 3, 8, 11, 11, 7, 2, 11, 6, 1, 9, 12, 4, 0, 10, 12, 14, 4, 2, 4, 1, 5, 6, 7, 4, 5, 7, 3, 1, 8, 2, 0, 9, 8, 8, 7, 12, 11, 15, 12, 15, 15, 6, 5, 5, 7, 3, 10, 6, 14, 8, 14, 10, 1], dtype=np.int64).reshape((3, 2, 32))
scales = mx.array(np.array([-1.0, -1.0, -1.0, -1.0, 0.5, -1.0], dtype=np.float32).reshape((3, 2, 1)), dtype=mx.bfloat16)
biases = mx.array(np.array([1.0, 0.0, 4.0, -3.0, 1.0, -4.0], dtype=np.float32).reshape((3, 2, 1)), dtype=mx.bfloat16)
lhs_indices = np.array([0, 1, 2], dtype=np.int64).reshape((3,))
g = mx.ones((3, 1, 2), dtype=mx.bfloat16)
# the float64 rule: W = code * scale + bias per group along K; Y_q = x[i_q] W[j_q]^T; dx by the gather_mm rule; dscale = sum over the group of code * dW, dbias = sum over the group of dW
want = {"forward": np.array([-65.0, -31.0, 34.0, -31.0, 27.0, -80.0]).reshape((3, 1, 2)), "grad:x": np.array([-21.0, -20.0, -3.0, -5.0, -22.0, -6.0, -15.0, -25.0, -24.0, -20.0, -20.0, -18.0, -17.0, -22.0, -10.0, -12.0, -20.0, -8.0, -16.0, 0.0, -13.0, -18.0, -7.0, -17.0, -16.0, -15.0, -14.0, -13.0, -10.0, -24.0, -26.0, -2.0, -7.0, -9.0, -10.0, -28.0, -20.0, -7.0, -26.0, -14.0, -7.0, -16.0, -26.0, -23.0, -17.0, -14.0, -11.0, -13.0, -11.0, -9.0, -29.0, -11.0, -6.0, -15.0, -14.0, -11.0, -22.0, -22.0, -1.0, -13.0, -4.0, -7.0, -2.0, -9.0, -7.5, -7.0, -5.0, -1.0, -7.0, -6.0, -1.0, -4.5, 2.0, 3.5, -4.5, -9.5, -7.0, -4.5, -9.5, -10.5, -17.0, -9.5, -15.0, -17.5, -4.5, -2.0, -6.0, -10.0, -1.0, -7.0, -2.0, -15.0, -10.0, -15.0, -12.5, -1.5]).reshape((3, 1, 32)), "grad:scales": np.array([68.0, 31.0, -26.0, 25.0, 42.0, 56.0]).reshape((3, 2, 1)), "grad:biases": np.array([3.0, 3.0, 2.0, 2.0, 6.0, 6.0]).reshape((3, 2, 1))}
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
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=0.016, atol=0.016, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

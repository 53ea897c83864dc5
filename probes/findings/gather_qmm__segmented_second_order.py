#!/usr/bin/env python3
"""gather_qmm / segmented_second_order: gather_qmm second order on the sorted path: dscales/dbiases come from a segmented_mm, which has no VJP
Minimal input: qmm4/grid/rank0/rhs/sorted; the VJP of the VJP raises where the plain VJP works: ValueError: [Primitive::vjp] Not implemented for SegmentedMM.. MLX releases: 0.26.3 – 0.32.4 (≤ 0.25.2 – 0.26.2: cannot test, the first-order VJP for scales and biases raises, GatherQMM::vjp had none yet)
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, scales, biases):
    return mx.gather_qmm(x, mx.array((codes.reshape(*codes.shape[:-1], -1, 8) << np.arange(0, 32, 4)).sum(-1).astype(np.uint32)), scales, biases, rhs_indices=mx.array(rhs_indices, dtype=mx.uint32), transpose=True, group_size=32, bits=4, sorted_indices=True)


x = mx.array(np.array([0.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 0.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0, 0.0, -1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, -1.0, 0.0, 1.0, -1.0, 1.0, -1.0, 1.0, 1.0, 0.0, -1.0, -1.0, 1.0, 1.0, -1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0, -1.0, 1.0, 1.0, 0.0, 1.0, 1.0, -1.0, -1.0, 1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 0.0, 1.0, -1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 0.0, -1.0, 1.0, 1.0, 1.0, 1.0, 0.0], dtype=np.float32).reshape((3, 1, 32)), dtype=mx.float32)
codes = np.array([3, 14, 4, 13, 6, 11, 5, 10, 8, 2, 12, 1, 10, 11, 7, 14, 8, 13, 0, 7, 6, 4, 1, 13, 6, 8, 6, 6, 1, 15, 6, 7, 6, 13, 15, 3, 1, 13, 1, 8, 5, 7, 0, 2, 15, 13, 0, 11, 13, 14, 10, 14, 7, 13, 13, 1, 2, 9, 4, 14, 12, 2, 12, 4, 9, 2, 8, 5, 1, 12, 10, 12, 15, 3, 11, 9, 10, 0, 2, 7, 13, 2, 3, 0, 11, 1, 14, 1, 6, 10, 15, 1, 4, 5, 2, 8, 6, 14, 9, 12, 12, 4, 15, 6, 2, 11, 5, 7, 1, 12, 5, 14, 4, 10, 3, 15, 4, 11, 11, 3, 7, 13, 4, 4, 1, 0, 8, 13, 3, 6, 15, 3, 5, 4, 15, 14, 7, 9, 8, 12, 0, 4, 4, 2, 10, 5, 4, 15, 1, 5, 8, 13, 3, 15, 3, 11, 3, 15, 0, 7, 3, 13, 10, 5, 4, 4, 8, 2, 3, 15, 8, 4, 0, 4, 5, 1, 14, 6, 1, 15, 11, 15, 4, 4, 1, 3, 8, 6, 9, 14, 7, 14], dtype=np.int64).reshape((3, 2, 32))
scales = mx.array(np.array([-1.0, 0.5, 1.0, -1.0, 1.0, -1.0], dtype=np.float32).reshape((3, 2, 1)), dtype=mx.float32)
biases = mx.array(np.array([-2.0, -1.0, 3.0, 0.0, 1.0, -2.0], dtype=np.float32).reshape((3, 2, 1)), dtype=mx.float32)
rhs_indices = np.array([2], dtype=np.int64).reshape(())
g = mx.ones((3, 1, 2), dtype=mx.float32)
# the float64 rule: W = code * scale + bias per group along K; Y_q = x[i_q] W[j_q]^T; dx by the gather_mm rule; dscale = sum over the group of code * dW, dbias = sum over the group of dW
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:x": np.array([16.0, 35.0, 59.0, 18.0, 23.0, 20.0, 57.0, 48.0, 28.0, 46.0, 36.0, 44.0, 4.0, 20.0, 21.0, 11.0, 48.0, 25.0, 17.0, 64.0, 18.0, 34.0, 32.0, 47.0, 14.0, 52.0, 21.0, 43.0, 22.0, 63.0, 11.0, 39.0, 16.0, 35.0, 59.0, 18.0, 23.0, 20.0, 57.0, 48.0, 28.0, 46.0, 36.0, 44.0, 4.0, 20.0, 21.0, 11.0, 48.0, 25.0, 17.0, 64.0, 18.0, 34.0, 32.0, 47.0, 14.0, 52.0, 21.0, 43.0, 22.0, 63.0, 11.0, 39.0, 16.0, 35.0, 59.0, 18.0, 23.0, 20.0, 57.0, 48.0, 28.0, 46.0, 36.0, 44.0, 4.0, 20.0, 21.0, 11.0, 48.0, 25.0, 17.0, 64.0, 18.0, 34.0, 32.0, 47.0, 14.0, 52.0, 21.0, 43.0, 22.0, 63.0, 11.0, 39.0]).reshape((3, 1, 32)), "second:scales": np.array([0.0, 0.0, 0.0, 0.0, 259.0, 203.0]).reshape((3, 2, 1)), "second:biases": np.array([0.0, 0.0, 0.0, 0.0, 30.0, 30.0]).reshape((3, 2, 1)), "second:cotangent": np.array([104.0, -116.0, 112.0, -16.0, 305.0, -39.0]).reshape((3, 1, 2))}
try:
    mx.eval(f(x, scales, biases))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([-1.0, 2.0, 1.0, 3.0, 3.0, 1.0, 3.0, -2.0, -2.0, -3.0, -1.0, 1.0, 1.0, 2.0, 3.0, -1.0, 3.0, -3.0, 3.0, 2.0, 3.0, 1.0, -2.0, 1.0, -1.0, 3.0, 3.0, -2.0, -3.0, 1.0, 1.0, -3.0, -1.0, -3.0, -1.0, 3.0, -2.0, -3.0, 1.0, 3.0, -2.0, -3.0, 2.0, 2.0, 1.0, 2.0, -3.0, 1.0, 3.0, 2.0, -2.0, -2.0, 2.0, 3.0, -1.0, -3.0, -3.0, 1.0, 1.0, 3.0, -3.0, -1.0, -1.0, 3.0, -3.0, 1.0, -3.0, 1.0, 2.0, -3.0, -2.0, 3.0, -3.0, 3.0, 1.0, 3.0, 2.0, -1.0, 1.0, 2.0, -2.0, 3.0, -2.0, -2.0, 2.0, 2.0, 3.0, 1.0, 3.0, 3.0, 1.0, 2.0, -3.0, 1.0, -3.0, 1.0]).reshape((3, 1, 32)), dtype=mx.float32), mx.array(np.array([-3.0, -2.0, -2.0, -2.0, 3.0, 1.0]).reshape((3, 2, 1)), dtype=mx.float32), mx.array(np.array([-2.0, -2.0, 1.0, -2.0, 2.0, 2.0]).reshape((3, 2, 1)), dtype=mx.float32)]
h = lambda x, scales, biases, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [x, scales, biases], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range(4)))(x, scales, biases, g))))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vjp(f, [x, scales, biases], [g]))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (second_order raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

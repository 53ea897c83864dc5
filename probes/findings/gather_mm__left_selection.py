#!/usr/bin/env python3
"""gather_mm / left_selection: sorted_indices with repeated or omitted left indices: the segmented VJP fast path gives wrong dA and dB
Minimal input: gmm/report_example/wrt_a/sorted; grad:a: MLX [[[3.0]], [[5.0]]] vs float64 rule [[[8.0]], [[0.0]]]. MLX releases: 0.26.3 – 0.32.4 (0.26.2 not).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.gather_mm(a, b, lhs_indices=mx.array(lhs_indices, dtype=mx.uint32), sorted_indices=True)


a = mx.array(np.array([2.0, 7.0], dtype=np.float32).reshape((2, 1, 1)), dtype=mx.float32)
b = mx.array(np.array([3.0, 5.0], dtype=np.float32).reshape((2, 1, 1)), dtype=mx.float32)
lhs_indices = np.array([0, 0], dtype=np.int64).reshape((2,))
g = mx.ones((2, 1, 1), dtype=mx.float32)
# the float64 rule: Y_q = A[i_q] B[j_q]; dA[l] = sum over q with i_q = l of G_q B[j_q]^T; dB[l] = sum over q with j_q = l of A[i_q]^T G_q
want = {"forward": np.array([6.0, 10.0]).reshape((2, 1, 1)), "grad:a": np.array([8.0, 0.0]).reshape((2, 1, 1))}
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

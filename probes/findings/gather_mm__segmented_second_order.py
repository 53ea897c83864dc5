#!/usr/bin/env python3
"""gather_mm / segmented_second_order: second order on the sorted path: dB is a segmented_mm, which has no VJP, so the VJP of the VJP raises
Minimal input: gmm/broadcast_right/left_identity/sorted; the VJP of the VJP raises where the plain VJP works: ValueError: [Primitive::vjp] Not implemented for SegmentedMM.. MLX releases: 0.26.3 – 0.32.4 (0.26.2 not).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, b):
    return mx.gather_mm(a, b, lhs_indices=mx.array(lhs_indices, dtype=mx.uint32), sorted_indices=True)


a = mx.array(np.array([2.0, -3.0, -2.0, -1.0, -1.0, -4.0, 2.0, -3.0, 0.0, 1.0, -2.0, 2.0, -4.0, 1.0, 4.0, -2.0, -1.0, 0.0], dtype=np.float32).reshape((3, 2, 3)), dtype=mx.float32)
b = mx.array(np.array([-2.0, -4.0, -4.0, 2.0, -2.0, 0.0], dtype=np.float32).reshape((1, 3, 2)), dtype=mx.float32)
lhs_indices = np.array([0, 1, 2], dtype=np.int64).reshape((3,))
g = mx.ones((3, 2, 2), dtype=mx.float32)
# the float64 rule: Y_q = A[i_q] B[j_q]; dA[l] = sum over q with i_q = l of G_q B[j_q]^T; dB[l] = sum over q with j_q = l of A[i_q]^T G_q
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:a": np.array([4.0, -4.0, -1.0, 4.0, -4.0, -1.0, 4.0, -4.0, -1.0, 4.0, -4.0, -1.0, 4.0, -4.0, -1.0, 4.0, -4.0, -1.0]).reshape((3, 2, 3)), "second:b": np.array([-4.0, -4.0, 1.0, 1.0, -1.0, -1.0]).reshape((1, 3, 2)), "second:cotangent": np.array([17.0, 9.0, 4.0, 10.0, 21.0, -11.0, 11.0, 17.0, -43.0, 3.0, 17.0, -3.0]).reshape((3, 2, 2))}
try:
    mx.eval(f(a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([-1.0, 2.0, -1.0, -3.0, 3.0, 1.0, 3.0, -2.0, -2.0, -3.0, -1.0, 1.0, 1.0, 2.0, 3.0, -1.0, -3.0, -3.0]).reshape((3, 2, 3)), dtype=mx.float32), mx.array(np.array([3.0, 1.0, -3.0, -1.0, -3.0, 2.0]).reshape((1, 3, 2)), dtype=mx.float32)]
h = lambda a, b, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [a, b], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range(3)))(a, b, g))))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vjp(f, [a, b], [g]))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (second_order raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

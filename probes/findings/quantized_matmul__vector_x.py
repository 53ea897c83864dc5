#!/usr/bin/env python3
"""quantized_matmul / vector_x: the VJP of quantized_matmul raises for a 1-D x
Minimal input: x of shape (32,), 4 bits, group 32, d(scales): [flatten] start_axis must be less than or equal to end_axis vs dscales = 32. MLX releases: 0.29.0 – 0.32.4 (older: cannot test).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, scales, biases):
    return mx.quantized_matmul(x, mx.array((codes.reshape(*codes.shape[:-1], -1, 8) << np.arange(0, 32, 4)).sum(-1).astype(np.uint32)), scales, biases, transpose=True, group_size=32, bits=4, mode="affine")


x = mx.array(np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32).reshape((32,)), dtype=mx.float32)
codes = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], dtype=np.int64).reshape((1, 32))
scales = mx.array(np.array([1.0], dtype=np.float32).reshape((1, 1)), dtype=mx.float32)
biases = mx.array(np.array([3.0], dtype=np.float32).reshape((1, 1)), dtype=mx.float32)
g = mx.ones((1,), dtype=mx.float32)
# the float64 rule: W = code * scale + bias per group of W's stored last axis; y = x W^T (transpose) or x W; dx = g W (or g W^T); dW = g^T x (or x^T g) summed over the batch; dscale = sum over the group of code * dW, dbias = sum over the group of dW
want = {"forward": np.array([128.0]).reshape((1,)), "grad:x": np.array([4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]).reshape((32,)), "grad:scales": np.array([32.0]).reshape((1, 1)), "grad:biases": np.array([32.0]).reshape((1, 1))}
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

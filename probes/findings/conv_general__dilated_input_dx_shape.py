#!/usr/bin/env python3
"""conv_general / dilated_input_dx_shape: with input dilation and an asymmetric padding, dx has the wrong shape
Minimal input: x, w (1,1,1), input_dilation 2, padding (0,1): dx shape (1,0,1) vs [3]. MLX releases: 0.32.4 only (0.32.3 not).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, w_):
    return mx.conv_general(x, w_, stride=[1], padding=([0], [1]), kernel_dilation=[1], input_dilation=[2], groups=1, flip=False)


x = mx.array(np.array([1.0], dtype=np.float32).reshape((1, 1, 1)), dtype=mx.float32)
w_ = mx.array(np.array([3.0], dtype=np.float32).reshape((1, 1, 1)), dtype=mx.float32)
g = mx.ones((1, 2, 1), dtype=mx.float32)
# the float64 rule: for every output o, kernel tap k and the input element q they meet (stride, padding, both dilations, flip, the output channel's group): dx[q] += g[o] w[k], dw[k] += g[o] x[q]
want = {"forward": np.array([3.0, 0.0]).reshape((1, 2, 1)), "grad:x": np.array([3.0]).reshape((1, 1, 1)), "grad:w": np.array([1.0]).reshape((1, 1, 1))}
try:
    mx.eval(f(x, w_))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [x, w_], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

#!/usr/bin/env python3
"""conv_general / dilated_input_dx_shape_second_order: second order of a strided convolution: its dx is a convolution with input dilation, whose own dx has the wrong shape
Minimal input: conv_general/1d/stride3_remainder; the VJP of the VJP raises where the plain VJP works: ValueError: [broadcast_shapes] Shapes (2,2,3) and (2,0,3) cannot be broadcast.. MLX releases: ≤ 0.25.2 – 0.32.2 and 0.32.4 (0.32.3 not; up to 0.32.2 second:x comes out empty, 0.32.4 raises).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, w_):
    return mx.conv_general(x, w_, stride=3, padding=0, kernel_dilation=1, input_dilation=1, groups=1, flip=False)


x = mx.array(np.array([-4.0, -3.0, -3.0, 0.0, 3.0, 3.0, -3.0, 1.0, 4.0, -4.0, -4.0, -2.0, 1.0, 2.0, 4.0, -3.0, 3.0, -3.0, -4.0, -3.0, 2.0, -4.0, 2.0, 4.0, -2.0, -4.0, -3.0, -1.0, -3.0, 0.0, 4.0, 1.0], dtype=np.float32).reshape((2, 8, 2)), dtype=mx.float32)
w_ = mx.array(np.array([1.0, -3.0, 0.0, -2.0, 3.0, -1.0, 3.0, 1.0, -1.0, 4.0, -4.0, 0.0, -4.0, -3.0, -3.0, 4.0, 2.0, -3.0], dtype=np.float32).reshape((3, 3, 2)), dtype=mx.float32)
g = mx.array(np.array([3.0, -2.0, 4.0, 4.0, -3.0, -1.0, -4.0, -4.0, -4.0, 0.0, 1.0, 1.0]).reshape((2, 2, 3)), dtype=mx.float32)
# the float64 rule: for every output o, kernel tap k and the input element q they meet (stride, padding, both dilations, flip, the output channel's group): dx[q] += g[o] w[k], dw[k] += g[o] x[q]
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:x": np.array([-9.0, -11.0, 1.0, -27.0, 13.0, 3.0, 8.0, -3.0, -18.0, -18.0, -2.0, 11.0, 0.0, 0.0, 0.0, 0.0, 28.0, -8.0, -4.0, 12.0, -20.0, 8.0, -6.0, 1.0, 4.0, 0.0, 4.0, -3.0, 0.0, 0.0, 0.0, 0.0]).reshape((2, 8, 2)), "second:w": np.array([-3.0, 14.0, -7.0, -29.0, 17.0, 3.0, -21.0, 11.0, -15.0, 10.0, 12.0, 3.0, -21.0, 3.0, -17.0, -14.0, 28.0, 7.0]).reshape((3, 3, 2)), "second:cotangent": np.array([35.0, -31.0, 19.0, -1.0, 5.0, -14.0, 13.0, 2.0, -3.0, 16.0, -15.0, 10.0]).reshape((2, 2, 3))}
try:
    mx.eval(f(x, w_))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([-1.0, -2.0, -1.0, -3.0, 3.0, 1.0, 3.0, 2.0, 2.0, -3.0, -1.0, -1.0, 1.0, -2.0, 3.0, 1.0, 3.0, -3.0, 3.0, 2.0, -3.0, -1.0, -2.0, 1.0, 1.0, 3.0, 3.0, -2.0, -3.0, -1.0, -1.0, 3.0]).reshape((2, 8, 2)), dtype=mx.float32), mx.array(np.array([-1.0, 1.0, -3.0, -3.0, 1.0, 1.0, -3.0, 3.0, 1.0, 3.0, 1.0, -2.0, -3.0, -2.0, 3.0, -3.0, 3.0, -1.0]).reshape((3, 3, 2)), dtype=mx.float32)]
h = lambda x, w_, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [x, w_], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range(3)))(x, w_, g))))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vjp(f, [x, w_], [g]))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (second_order raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

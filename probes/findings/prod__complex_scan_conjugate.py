#!/usr/bin/env python3
"""prod / complex_scan_conjugate: prod of complex input: the first order is right, the VJP of its VJP is not (it multiplies by conj(cumprod) and differentiates through the conj)
Minimal input: prod/complex; second:a: MLX [[[-33.0, 12.0], [12.0, 12.0], [-15.0, -36.0]], [[5.0, -1... vs float64 rule [[[-21.0, 24.0], [24.0, 24.0], [-51.0, -24.0]], [[5.0, -1.... MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.prod(a, axis=1, keepdims=False)


a = mx.array(np.array([complex(-3.0, 2.0), complex(3.0, 2.0), complex(-3.0, 0.0), complex(1.0, 1.0), complex(-2.0, 0.0), complex(-2.0, 1.0)], dtype=np.complex64).reshape((2, 3)), dtype=mx.complex64)
g = mx.array(np.array([complex(-3.0, 0.0), complex(0.0, 1.0)]).reshape((2,)), dtype=mx.complex64)
# the float64 rule: d x_i = g * conj(product of the rest of its group)
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:a": np.array([complex(-21.0, 24.0), complex(24.0, 24.0), complex(-51.0, -24.0), complex(5.0, -10.0), complex(-1.0, -3.0), complex(3.0, -5.0)]).reshape((2, 3)), "second:cotangent": np.array([complex(-64.0, 11.0), complex(-1.0, -7.0)]).reshape((2,))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([complex(1.0, -3.0), complex(-2.0, -1.0), complex(1.0, 1.0), complex(3.0, 1.0), complex(3.0, 2.0), complex(1.0, -3.0)]).reshape((2, 3)), dtype=mx.complex64)]
h = lambda a, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [a], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range(2)))(a, g))))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vjp(f, [a], [g]))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (second_order raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.complex64 if x.dtype == mx.complex64 else mx.float32)) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

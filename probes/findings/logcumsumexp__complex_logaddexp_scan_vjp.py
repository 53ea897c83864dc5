#!/usr/bin/env python3
"""logcumsumexp / complex_logaddexp_scan_vjp: logcumsumexp on complex input: the VJP drops the cotangent's imaginary part and takes no conjugate (silent)
Minimal input: a=[1j, 0], g=[1j, 1] (complex64), axis 0: da [1.5+0.2732j, 0.5-0.2732j] vs float64 rule [0.5+0.7268j, 0.5+0.2732j] (a=[0], g=[1j]: [1] vs [1j]). MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.logcumsumexp(a, axis=0, reverse=False, inclusive=True)


a = mx.array(np.array([complex(0.0, 1.0), complex(0.0, 0.0)], dtype=np.complex64).reshape((2,)), dtype=mx.complex64)
g = mx.array(np.array([complex(0.0, 1.0), complex(1.0, 0.0)]).reshape((2,)), dtype=mx.complex64)
# the float64 rule: y_i = log sum over the window S(i) of exp(x_j); d x_j = sum over windows i holding j of g_i exp(x_j - y_i)
want = {"forward": np.array([complex(2.4228383963033683e-17, 1.0), complex(0.5625629401162227, 0.5)]).reshape((2,)), "grad:a": np.array([complex(0.5, 0.7268487550781048), complex(0.5, 0.27315124492189524)]).reshape((2,))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.complex64 if x.dtype == mx.complex64 else mx.float32)) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

#!/usr/bin/env python3
"""cumprod / complex_scan_conjugate: cumprod of complex input: Scan::vjp multiplies g by the other factors without conjugating them
Minimal input: cumprod/complex/forward/inclusive; grad:a: MLX [[0.0, 2.0], [-3.0, -1.0], [5.0, 10.0], [-8.0, -6.0]] vs float64 rule [[22.0, 2.0], [3.0, -21.0], [7.0, 26.0], [-6.0, -8.0]]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.cumprod(a, axis=0, reverse=False, inclusive=True)


a = mx.array(np.array([complex(1.0, 2.0), complex(2.0, -1.0), complex(-1.0, 1.0), complex(1.0, -2.0)], dtype=np.complex64).reshape((4,)), dtype=mx.complex64)
g = mx.array(np.array([complex(1.0, -1.0), complex(2.0, 0.0), complex(-1.0, 2.0), complex(1.0, 1.0)]).reshape((4,)), dtype=mx.complex64)
# the float64 rule: y[i] = product of x[j] over the window S(i) (j <= i; j < i when exclusive; mirrored when reversed; empty: 1); dx[j] = sum over outputs i whose window holds j of g[i] times the product of the other factors (never a division)
want = {"forward": np.array([complex(1.0, 2.0), complex(4.0, 3.0), complex(-7.0, 1.0), complex(-5.0, 15.0)]).reshape((4,)), "grad:a": np.array([complex(22.0, 2.0), complex(3.0, -21.0), complex(7.0, 26.0), complex(-6.0, -8.0)]).reshape((4,))}
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

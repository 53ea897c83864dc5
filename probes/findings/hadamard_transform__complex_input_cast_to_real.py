#!/usr/bin/env python3
"""hadamard_transform / complex_input_cast_to_real: hadamard_transform of complex input: the imaginary part is dropped and a float32 result returned (silent), so the VJP is that of the real part
Minimal input: a=[1+2j, 3-1j] (complex64), scale 1: y MLX [4, -2] (float32) vs hadamard(2) @ a = [4+1j, -2+3j]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.hadamard_transform(a, scale=1.0)


a = mx.array(np.array([complex(1.0, 2.0), complex(3.0, -1.0)], dtype=np.complex64).reshape((2,)), dtype=mx.complex64)
g = mx.array(np.array([complex(1.0, 0.0), complex(0.0, 1.0)]).reshape((2,)), dtype=mx.complex64)
# the float64 rule: along the last axis y = scale M a with M = H_m kron S_k (n = m 2^k); dx = scale M^T g, the transpose: M itself only where H_m is symmetric (m = 1, 12)
want = {"forward": np.array([complex(4.0, 1.0), complex(-2.0, 3.0)]).reshape((2,)), "grad:a": np.array([complex(1.0, 1.0), complex(1.0, -1.0)]).reshape((2,))}
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

#!/usr/bin/env python3
"""at_multiply / complex_prod_conjugate: a.at[slice].multiply(v) of complex input: SliceUpdate::vjp (Prod) multiplies g by v and by the sliced values without conjugating them
Minimal input: a=[[1+2j, 3-1j]], v=[[2-1j]], a.at[:, 0:1].multiply(v), g ones: da [[2-1j, 1]] vs [[2+1j, 1]], dv [[1+2j]] vs [[1-2j]]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, v):
    return a.at[:, 0:1].multiply(v)


a = mx.array(np.array([complex(1.0, 2.0), complex(3.0, -1.0)], dtype=np.complex64).reshape((1, 2)), dtype=mx.complex64)
v = mx.array(np.array([complex(2.0, -1.0)], dtype=np.complex64).reshape((1, 1)), dtype=mx.complex64)
g = mx.ones((1, 2), dtype=mx.complex64)
# the float64 rule: out[t] = a[t] * prod of f(v) over the writes to t (f(x) = x, or 1/x for divide); d a[t] = g[t] * that product; d v[s] = sum over its writes of g[t] a[t] (the other factors) f'(v[s])
want = {"forward": np.array([complex(4.0, 3.0), complex(3.0, -1.0)]).reshape((1, 2)), "grad:a": np.array([complex(2.0, 1.0), complex(1.0, 0.0)]).reshape((1, 2)), "grad:v": np.array([complex(1.0, -2.0)]).reshape((1, 1))}
try:
    mx.eval(f(a, v))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a, v], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.complex64 if x.dtype == mx.complex64 else mx.float32)) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

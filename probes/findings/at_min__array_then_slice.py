#!/usr/bin/env python3
"""at_min / array_then_slice: out.at[idx, :].minimum(v): the VJP gathers the wrong window (silent)
Minimal input: a=[[0,4]], v=[[-4,-8]]: dv [[1,0]] vs [[1,1]]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, v):
    return a.at[mx.array(row_indices, dtype=mx.int32), :].minimum(v)


a = mx.array(np.array([0.0, 4.0], dtype=np.float32).reshape((1, 2)), dtype=mx.float32)
v = mx.array(np.array([-4.0, -8.0], dtype=np.float32).reshape((1, 2)), dtype=mx.float32)
row_indices = np.array([0], dtype=np.int64).reshape((1,))
g = mx.ones((1, 2), dtype=mx.float32)
# the float64 rule: out[t] = min(a[t], every v written to t); g[t] goes to the unique winner among the distinct inputs (a[t], or the winning element of v, once however many writes carried it)
want = {"forward": np.array([-4.0, -8.0]).reshape((1, 2)), "grad:a": np.array([0.0, 0.0]).reshape((1, 2)), "grad:v": np.array([1.0, 1.0]).reshape((1, 2))}
try:
    mx.eval(f(a, v))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a, v], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

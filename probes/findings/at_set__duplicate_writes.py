#!/usr/bin/env python3
"""at_set / duplicate_writes: each occurrence of a repeated index gets the cotangent
Minimal input: a=[[1]], idx [0,0], one shared value: dv 2 vs 1. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, v):
    return (out := mx.array(a)).__setitem__(np.s_[mx.array(row_indices, dtype=mx.int32)], mx.take(v, mx.array([[*dict.fromkeys(row_indices.flat)].index(k) for k in row_indices.flat]), axis=0).reshape(row_indices.shape + (v.shape[-1],))) or out


a = mx.array(np.array([1.0], dtype=np.float32).reshape((1, 1)), dtype=mx.float32)
v = mx.array(np.array([8.0], dtype=np.float32).reshape((1, 1)), dtype=mx.float32)
row_indices = np.array([0, 0], dtype=np.int64).reshape((2,))
g = mx.ones((1, 1), dtype=mx.float32)
# the float64 rule: out = a with out[key] = v; d a = g with every written position zeroed; d v[s] = sum of g over the distinct positions v[s] is written to (once each, however many writes)
want = {"forward": np.array([8.0]).reshape((1, 1)), "grad:a": np.array([0.0]).reshape((1, 1)), "grad:v": np.array([1.0]).reshape((1, 1))}
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

#!/usr/bin/env python3
"""cumprod / zero_second_order: cumprod with a zero in a lane: the VJP is right but its own VJP (second order) is NaN (0 * inf from the division by x)
Minimal input: cumprod/length1/exclusive; second:a: MLX [[{"nonfinite": "nan"}], [0.0]] vs float64 rule [[0.0], [0.0]]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.cumprod(a, axis=1, reverse=False, inclusive=False)


a = mx.array(np.array([0.0, 3.0], dtype=np.float32).reshape((2, 1)), dtype=mx.float32)
g = mx.ones((2, 1), dtype=mx.float32)
# the float64 rule: y[i] = product of x[j] over the window S(i) (j <= i; j < i when exclusive; mirrored when reversed; empty: 1); dx[j] = sum over outputs i whose window holds j of g[i] times the product of the other factors (never a division)
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:a": np.array([0.0, 0.0]).reshape((2, 1)), "second:cotangent": np.array([0.0, 0.0]).reshape((2, 1))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([-1.0, -2.0]).reshape((2, 1)), dtype=mx.float32)]
h = lambda a, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [a], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range(2)))(a, g))))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vjp(f, [a], [g]))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (second_order raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

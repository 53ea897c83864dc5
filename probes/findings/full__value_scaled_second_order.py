#!/usr/bin/env python3
"""full / value_scaled_second_order: mx.full(shape, v) with v all ones: the first order is right but the VJP's own derivative in v is g instead of 0
Minimal input: full/defect/value_scaled/unit_rank0; second:v: MLX 2.0 vs float64 rule 0.0. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(v):
    return mx.full((), v)


v = mx.array(np.array([1.0], dtype=np.float32).reshape(()), dtype=mx.float32)
g = mx.array(np.array([2.0]).reshape(()), dtype=mx.float32)
# the float64 rule: each output element copies an element of v: d v = the sum of g over its copies
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:v": np.array([0.0]).reshape(()), "second:cotangent": np.array([1.0]).reshape(())}
try:
    mx.eval(f(v))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([1.0]).reshape(()), dtype=mx.float32)]
h = lambda v, g: sum(mx.sum(mx.real(mx.conj(d) * x)) for d, x in zip(u, mx.vjp(f, [v], [g])[1]))   # <u, J^T g>
try:
    mx.eval(got := dict(zip(want, mx.grad(h, argnums=list(range(2)))(v, g))))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vjp(f, [v], [g]))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (second_order raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

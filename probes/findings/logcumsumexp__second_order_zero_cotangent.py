#!/usr/bin/env python3
"""logcumsumexp / second_order_zero_cotangent: logcumsumexp: the VJP is linear in g but is built from log|g|, so its derivative in g is NaN where g is 0
Minimal input: logcumsumexp/defect/second_order_zero_cotangent; second:cotangent: MLX [-1.0, 1.1931755542755127, {"nonfinite": "nan"}] vs float64 rule [-1.0, 1.1931757358898394, -0.2658145868359345]. MLX releases: ≤ 0.25.2 – 0.32.4.
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


a = mx.array(np.array([1.0, 2.0, 3.0], dtype=np.float32).reshape((3,)), dtype=mx.float32)
g = mx.array(np.array([-4.0, 4.0, 0.0]).reshape((3,)), dtype=mx.float32)
# the float64 rule: y_i = log sum over the window S(i) of exp(x_j); d x_j = sum over windows i holding j of g_i exp(x_j - y_i)
# second order: the gradient of <u, J^T g> is H u (the operands) and J u (the cotangent)
want = {"second:a": np.array([-2.3593431988978724, 2.359343198898302, 0.0]).reshape((3,)), "second:cotangent": np.array([-1.0, 1.1931757358898394, -0.2658145868359345]).reshape((3,))}
try:
    mx.eval(f(a))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
u = [mx.array(np.array([-1.0, 2.0, -1.0]).reshape((3,)), dtype=mx.float32)]
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

#!/usr/bin/env python3
"""array_equal / equal_nan_vmap: vmap through array_equal(a, b, equal_nan=True): Equal::vmap drops equal_nan, so arrays with NaN in the same places compare unequal
Minimal input: compare/array_equal/convention/nan_same_places (a = [1, -1, 2, -3], b = [1, -2, 2, -0.5], negatives marked NaN: where(array_equal(m(a), m(b), equal_nan=True), a, -b)); vmap:grad:a#0: MLX [0.0, 0.0, 0.0, 0.0] vs float64 rule [-1.0, 1.0, 1.0, -2.0]. MLX releases: 0.26.1 – 0.32.4 (0.25.2
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, b):
    return mx.where(mx.array_equal(mx.where(a < 0, mx.nan, a), mx.where(b < 0, mx.nan, b), equal_nan=True), a, -b)


a = mx.array(np.array([1.0, -1.0, 2.0, -3.0], dtype=np.float32).reshape((4,)), dtype=mx.float32)
b = mx.array(np.array([1.0, -2.0, 2.0, -0.5], dtype=np.float32).reshape((4,)), dtype=mx.float32)
g = mx.array(np.array([-1.0, 1.0, 1.0, -2.0]).reshape((4,)), dtype=mx.float32)
# the float64 rule: where(array_equal(m(a), m(b), NaN == NaN), a, -b), m(x) = NaN where x < 0: (g, 0) everywhere when m(a) and m(b) are equal (the same shape), else (0, -g); the condition's gradient is 0
# vmap over two examples: the cotangent g, then -2 g (the VJP is linear in g)
want = {"vmap:forward#0": np.array([1.0, -1.0, 2.0, -3.0]).reshape((4,)), "vmap:forward#1": np.array([1.0, -1.0, 2.0, -3.0]).reshape((4,)), "vmap:grad:a#0": np.array([-1.0, 1.0, 1.0, -2.0]).reshape((4,)), "vmap:grad:a#1": np.array([2.0, -2.0, -2.0, 4.0]).reshape((4,)), "vmap:grad:b#0": np.array([0.0, 0.0, 0.0, 0.0]).reshape((4,)), "vmap:grad:b#1": np.array([0.0, 0.0, 0.0, 0.0]).reshape((4,))}
try:
    mx.eval(f(a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
batch, cots = [mx.stack([x, x]) for x in (a, b,)], mx.stack([g, (-2.0 * g).astype(g.dtype)])
try:   # each output of the mapped VJP (the forward, then each gradient) for examples 0 and 1
    res = mx.vmap(lambda *a: (lambda o: [*o[0], *o[1]])(mx.vjp(f, list(a[:-1]), [a[-1]])))(*batch, cots)
    mx.eval(got := dict(zip(want, [r[k] if r.shape[:1] == (2,) else r for r in res for k in (0, 1)])))
except Exception as e:
    try:   # the transform's fault only where the call works without it
        mx.eval(mx.vmap(f)(*batch))
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present (vmap raised {type(e).__name__}: {e})") or 1)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

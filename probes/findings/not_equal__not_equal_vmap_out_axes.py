#!/usr/bin/env python3
"""not_equal / not_equal_vmap_out_axes: vmap of a VJP through not_equal: the output is taken as unbatched, so the VJP for b comes back in the broadcast shape
Minimal input: compare/not_equal/own/broadcast/wrt_b; vmap:batch: MLX [4.0, 2.0, 3.0] vs float64 rule [2.0, 2.0, 3.0]. MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(b):
    return mx.not_equal(a, b)


a = mx.array(np.array([2.0, -2.0, -3.0], dtype=np.float32).reshape((3, 1)), dtype=mx.float32)
b = mx.array(np.array([50.0, -1.5, 50.0, -2.5, 50.0, -2.5, 50.0, -0.5, 50.0], dtype=np.float32).reshape((9,)), dtype=mx.float32)
mx.eval(b)
b = b[1:9:2]
g = mx.array(np.array([-1.0, -1.0, 2.0, -1.0, 1.0, 1.0, 3.0, -2.0, 3.0, 3.0, 1.0, 2.0]).reshape((3, 4)), dtype=mx.float32)
# the float64 rule: where(a != b, a, -b): (g, 0) where different, else (0, -g); d(a != b) = 0
# vmap over two examples: the cotangent g, then -2 g (the VJP is linear in g)
want = {"vmap:forward#0": np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).reshape((3, 4)), "vmap:forward#1": np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).reshape((3, 4)), "vmap:grad:b#0": np.array([0.0, 0.0, 0.0, 0.0]).reshape((4,)), "vmap:grad:b#1": np.array([0.0, 0.0, 0.0, 0.0]).reshape((4,))}
try:
    mx.eval(f(b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
batch, cots = [mx.stack([x, x]) for x in (b,)], mx.stack([g, (-2.0 * g).astype(g.dtype)])
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

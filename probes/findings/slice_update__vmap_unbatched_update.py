#!/usr/bin/env python3
"""slice_update / vmap_unbatched_update: vmap of a slice update whose update is unbatched writes batch element 0 only, so the mapped VJP for a is wrong
Minimal input: slice_update/dynamic/lower_rank_update; vmap:grad:a#1: MLX [[-8.0, 4.0, 8.0, 6.0, -8.0], [4.0, -6.0, 8.0, 2.0, 4.0],... vs float64 rule [[-8.0, 4.0, 8.0, -0.0, -0.0], [4.0, -6.0, 8.0, -0.0, -0..... MLX releases: ≤ 0.25.2 – 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a, u):
    return mx.slice_update(a, u, mx.array(start, dtype=mx.uint32), [1])


a = mx.array(np.array([3.0, 4.0, 2.0, 2.0, -1.0, -2.0, -4.0, 1.0, -3.0, 1.0, -3.0, -3.0, 4.0, 2.0, -2.0, -2.0, -3.0, -3.0, -2.0, 2.0], dtype=np.float32).reshape((4, 5)), dtype=mx.float32)
u = mx.array(np.array([6.0, 9.0], dtype=np.float32).reshape((2,)), dtype=mx.float32)
start = np.array([3], dtype=np.int64).reshape((1,))
g = mx.array(np.array([4.0, -2.0, -4.0, -3.0, 4.0, -2.0, 3.0, -4.0, -1.0, -2.0, -3.0, -1.0, 0.0, -1.0, 0.0, 3.0, -2.0, 1.0, 2.0, 1.0]).reshape((4, 5)), dtype=mx.float32)
# the float64 rule: d a = g outside the region (and inside too for static_add); d u = g over the region, summed over u's broadcast copies
# vmap over two examples: the cotangent g, then -2 g (the VJP is linear in g)
want = {"vmap:forward#0": np.array([3.0, 4.0, 2.0, 6.0, 9.0, -2.0, -4.0, 1.0, 6.0, 9.0, -3.0, -3.0, 4.0, 6.0, 9.0, -2.0, -3.0, -3.0, 6.0, 9.0]).reshape((4, 5)), "vmap:forward#1": np.array([3.0, 4.0, 2.0, 6.0, 9.0, -2.0, -4.0, 1.0, 6.0, 9.0, -3.0, -3.0, 4.0, 6.0, 9.0, -2.0, -3.0, -3.0, 6.0, 9.0]).reshape((4, 5)), "vmap:grad:a#0": np.array([4.0, -2.0, -4.0, 0.0, 0.0, -2.0, 3.0, -4.0, 0.0, 0.0, -3.0, -1.0, 0.0, 0.0, 0.0, 3.0, -2.0, 1.0, 0.0, 0.0]).reshape((4, 5)), "vmap:grad:a#1": np.array([-8.0, 4.0, 8.0, 0.0, 0.0, 4.0, -6.0, 8.0, 0.0, 0.0, 6.0, 2.0, 0.0, 0.0, 0.0, -6.0, 4.0, -2.0, 0.0, 0.0]).reshape((4, 5)), "vmap:grad:u#0": np.array([-3.0, 3.0]).reshape((2,)), "vmap:grad:u#1": np.array([6.0, -6.0]).reshape((2,))}
try:
    mx.eval(f(a, u))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
batch, cots = [mx.stack([x, x]) for x in (a, u,)], mx.stack([g, (-2.0 * g).astype(g.dtype)])
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

#!/usr/bin/env python3
"""conv_general / vmap_grouped_weights: vmap over the weight of a grouped convolution (and so vmap of its weight VJP) mixes the batch: each group takes channels of several batch elements
Minimal input: x (1, 2, 2) = [[[1, 2], [3, 4]]], w ones (2, 1, 1), groups 2, cotangents g = [[[1, 10], [100, 1000]]] and 2 g mapped: dw MLX [[301, 3010], [804, 8040]] vs a loop [[301, 4020], [602, 8040]]. MLX releases: 0.32.4 (found by fuzz; other releases: mlx-vjpcheck versions).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(w_):
    return mx.conv_general(x, w_, stride=1, padding=0, kernel_dilation=1, input_dilation=1, groups=2, flip=False)


x = mx.array(np.array([4.0, -1.0, -1.0, -3.0, 1.0, -4.0, -3.0, -2.0, -4.0, -1.0, -1.0, 2.0, -1.0, 3.0, -1.0, -4.0, -4.0, 4.0, -3.0, 3.0, -1.0, -1.0, 4.0, -2.0, -3.0, -3.0, 4.0, 0.0, 2.0, 3.0, -4.0, -1.0, 0.0, 4.0, 3.0, -1.0, -2.0, 4.0, 4.0, 3.0, -3.0, -1.0, 3.0, -2.0, 2.0, 4.0, 1.0, 2.0, -1.0, 2.0, 2.0, 2.0, 1.0, 3.0, 1.0, -3.0], dtype=np.float32).reshape((2, 7, 4)), dtype=mx.float32)
w_ = mx.array(np.array([1.0, 0.0, 3.0, 2.0, 3.0, 1.0, 1.0, 4.0, -2.0, 3.0, 2.0, -3.0, -4.0, 2.0, 1.0, 0.0, -3.0, 3.0, 3.0, -4.0, -3.0, 2.0, -1.0, 2.0], dtype=np.float32).reshape((4, 3, 2)), dtype=mx.float32)
g = mx.array(np.array([-2.0, 0.0, -3.0, 1.0, -2.0, -2.0, 4.0, 0.0, -4.0, -1.0, -1.0, 3.0, 3.0, 3.0, -4.0, 4.0, 0.0, -1.0, -2.0, 2.0, -2.0, 2.0, 4.0, 2.0, -3.0, 2.0, 1.0, 3.0, 3.0, 2.0, 1.0, -1.0, 4.0, 3.0, -4.0, -3.0, 0.0, -4.0, 2.0, 1.0]).reshape((2, 5, 4)), dtype=mx.float32)
# the float64 rule: for every output o, kernel tap k and the input element q they meet (stride, padding, both dilations, flip, the output channel's group): dx[q] += g[o] w[k], dw[k] += g[o] x[q]
# vmap over two examples: the cotangent g, then -2 g (the VJP is linear in g)
want = {"vmap:forward#0": np.array([-14.0, -19.0, 4.0, 19.0, -13.0, -21.0, -2.0, -1.0, -9.0, -17.0, 25.0, -7.0, -9.0, 32.0, -25.0, 20.0, -21.0, 14.0, 10.0, -41.0, 8.0, 10.0, 14.0, -17.0, -8.0, 29.0, -25.0, 0.0, -3.0, 9.0, -4.0, -10.0, 10.0, -7.0, -15.0, 20.0, 9.0, 19.0, -10.0, -14.0]).reshape((2, 5, 4)), "vmap:forward#1": np.array([-14.0, -19.0, 4.0, 19.0, -13.0, -21.0, -2.0, -1.0, -9.0, -17.0, 25.0, -7.0, -9.0, 32.0, -25.0, 20.0, -21.0, 14.0, 10.0, -41.0, 8.0, 10.0, 14.0, -17.0, -8.0, 29.0, -25.0, 0.0, -3.0, 9.0, -4.0, -10.0, 10.0, -7.0, -15.0, 20.0, 9.0, 19.0, -10.0, -14.0]).reshape((2, 5, 4)), "vmap:grad:w#0": np.array([-19.0, 13.0, 3.0, 3.0, 38.0, -8.0, -14.0, 17.0, -2.0, 30.0, -7.0, -2.0, -17.0, 19.0, 29.0, 3.0, -8.0, -19.0, -25.0, -7.0, 4.0, -1.0, 25.0, -8.0]).reshape((4, 3, 2)), "vmap:grad:w#1": np.array([38.0, -26.0, -6.0, -6.0, -76.0, 16.0, 28.0, -34.0, 4.0, -60.0, 14.0, 4.0, 34.0, -38.0, -58.0, -6.0, 16.0, 38.0, 50.0, 14.0, -8.0, 2.0, -50.0, 16.0]).reshape((4, 3, 2))}
try:
    mx.eval(f(w_))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
batch, cots = [mx.stack([x, x]) for x in (w_,)], mx.stack([g, (-2.0 * g).astype(g.dtype)])
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

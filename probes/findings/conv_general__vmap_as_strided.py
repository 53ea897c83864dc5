#!/usr/bin/env python3
"""conv_general / vmap_as_strided: vmap of the weight VJP on the general path raises: AsStrided has no vmap rule
Minimal input: conv_general/1d/kernel_wider_than_input; vmap of the VJP raises where the plain VJP works: ValueError: [Primitive::vmap] Not implemented for AsStrided.. MLX releases: 0.31.2 – 0.32.4 (≤ 0.25.2 – 0.31.1: the same vmap raises first in Pad, which had no vmap).
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x, w_):
    return mx.conv_general(x, w_, stride=1, padding=2, kernel_dilation=1, input_dilation=1, groups=1, flip=False)


x = mx.array(np.array([-3.0, 2.0], dtype=np.float32).reshape((1, 2, 1)), dtype=mx.float32)
w_ = mx.array(np.array([-2.0, 1.0, -1.0, -1.0, -3.0, -1.0, -2.0, 2.0], dtype=np.float32).reshape((2, 4, 1)), dtype=mx.float32)
g = mx.array(np.array([3.0, 4.0, -4.0, -1.0, 1.0, 3.0]).reshape((1, 3, 2)), dtype=mx.float32)
# the float64 rule: for every output o, kernel tap k and the input element q they meet (stride, padding, both dilations, flip, the output channel's group): dx[q] += g[o] w[k], dw[k] += g[o] x[q]
# vmap over two examples: the cotangent g, then -2 g (the VJP is linear in g)
want = {"vmap:forward#0": np.array([1.0, 10.0, -5.0, -1.0, 8.0, 7.0]).reshape((1, 3, 2)), "vmap:forward#1": np.array([1.0, 10.0, -5.0, -1.0, 8.0, 7.0]).reshape((1, 3, 2)), "vmap:grad:x#0": np.array([-25.0, 9.0]).reshape((1, 2, 1)), "vmap:grad:x#1": np.array([50.0, -18.0]).reshape((1, 2, 1)), "vmap:grad:w#0": np.array([-3.0, 14.0, -17.0, 6.0, -9.0, 9.0, -14.0, 8.0]).reshape((2, 4, 1)), "vmap:grad:w#1": np.array([6.0, -28.0, 34.0, -12.0, 18.0, -18.0, 28.0, -16.0]).reshape((2, 4, 1))}
try:
    mx.eval(f(x, w_))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
batch, cots = [mx.stack([x, x]) for x in (x, w_,)], mx.stack([g, (-2.0 * g).astype(g.dtype)])
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

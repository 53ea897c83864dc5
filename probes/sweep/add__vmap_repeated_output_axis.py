#!/usr/bin/env python3
"""add / vmap_repeated_output_axis: vmap of the VJP of a + b with the batch on a non-leading axis: db comes back with the batch axis not moved (Add::vjp returns the same array for both operands, and vmap_replace moves a repeated output's axis once per occurrence through a reference into its map, so every second occurrence is moved back)
Minimal input: a, b (3,), cotangents batched on axis 1 (3,2): da (2,3), db (3,2) vs (2,3). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

a = mx.array([1.0, 2.0, 3.0])
b = mx.array([4.0, 5.0, 6.0])
G = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])   # two cotangents, batched on axis 1
# the rule: d a = d b = g; vmap stacks the two examples on axis 0 (out_axes=0): G.T for both
want = {"vmap:grad:a": G.T, "vmap:grad:b": G.T}
try:
    got = mx.vmap(lambda g: mx.vjp(mx.add, [a, b], [g])[1], in_axes=1)(mx.array(G, dtype=mx.float32))
    mx.eval(got)
except Exception as e:
    sys.exit(print("cannot test: vmap raised", e) or 125)
have = dict(zip(want, [np.array(x, dtype=np.float64) for x in got]))
bad = [k for k, w in want.items() if not (have[k].shape == w.shape and np.allclose(have[k], w))]
for k, w in want.items():
    print(f"{k}: MLX shape {have[k].shape} {have[k].tolist()}, rule shape {w.shape} {w.tolist()}", "DIFFERS" if k in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

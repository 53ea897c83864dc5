#!/usr/bin/env python3
"""take / vmap_vjp_scatter_updates_axis: vmap of the VJP of take along an axis, cotangents batched on their last axis: wrong gradients and a heap write out of bounds (take's VJP is a scatter_add; Scatter::vmap inserts the updates' new axis before moving their batch axis to the front, so it moves the wrong axis)
Minimal input: x (2,3), take(x, [0,2,2], axis=1), two cotangents (2,3) on axis 2: row 1 of each dx is 0 (and glibc may abort). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import os
import subprocess
import sys

# MLX runs in a child that answers 10 (absent) or 11 (present): any other end of it,
# a signal or even exit(0) from inside MLX, means the mapped VJP killed the process.
if os.environ.get("REPRO_CHILD") != "1":
    rc = subprocess.run([sys.executable, *sys.argv], env={**os.environ, "REPRO_CHILD": "1"}).returncode
    sys.exit({10: 0, 11: 1, 125: 125}.get(rc) if rc in (10, 11, 125) else
             print(f"VERDICT: defect present (MLX ended the process: status {rc})") or 1)
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x, idx = mx.zeros((2, 3)), [0, 2, 2]
G = np.arange(1.0, 13.0).reshape(2, 3, 2)   # two cotangents of shape (2,3), batched on the last axis
# the rule: d x[:, j] = sum of g[:, p] over the positions p with idx[p] = j; vmap stacks the examples on axis 0
want = np.stack([np.stack([G[:, 0, k], np.zeros(2), G[:, 1, k] + G[:, 2, k]], axis=1) for k in range(2)])
try:
    got = mx.vmap(lambda g: mx.vjp(lambda x: mx.take(x, mx.array(idx), axis=1), [x], [g])[1][0], in_axes=2)(
        mx.array(G, dtype=mx.float32))
    mx.eval(got)
except Exception as e:
    sys.exit(print("cannot test: vmap raised", e) or 125)
have = np.array(got, dtype=np.float64)
bad = not (have.shape == want.shape and np.allclose(have, want))
print(f"vmap:grad:x: MLX {have.tolist()}, rule {want.tolist()}", "DIFFERS" if bad else "ok", flush=True)
sys.exit(print("VERDICT: defect " + ("present (vmap:grad:x differs)" if bad else "absent"), flush=True) or (11 if bad else 10))

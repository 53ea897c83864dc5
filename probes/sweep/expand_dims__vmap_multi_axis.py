#!/usr/bin/env python3
"""expand_dims / vmap_multi_axis: vmap of expand_dims with two new axes on both sides of a non-leading batch axis gives the wrong shape (ExpandDims::vmap compares each new axis with the original batch axis, not the batch axis as shifted by the earlier insertions)
Minimal input: x per example (3,4), batch 5 on the last axis, expand_dims(x, (0, 2)): shape (1,1,3,4,5) vs (5,1,3,1,4). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x = np.arange(60.0).reshape(3, 4, 5)   # 5 examples of shape (3,4) on the last axis
# the rule: example k of the output is np.expand_dims(x[..., k], (0, 2)), stacked on axis 0
want = np.stack([np.expand_dims(x[..., k], (0, 2)) for k in range(5)])
try:
    got = mx.vmap(lambda a: mx.expand_dims(a, (0, 2)), in_axes=-1)(mx.array(x, dtype=mx.float32))
    mx.eval(got)
except Exception as e:
    sys.exit(print("cannot test: vmap raised", e) or 125)
have = np.array(got, dtype=np.float64)
bad = not (have.shape == want.shape and np.array_equal(have, want))
print(f"vmap:forward: MLX shape {have.shape}, rule shape {want.shape}", "DIFFERS" if bad else "ok")
sys.exit(print("VERDICT: defect " + ("present (vmap:forward differs)" if bad else "absent")) or (1 if bad else 0))

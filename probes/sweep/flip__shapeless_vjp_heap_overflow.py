#!/usr/bin/env python3
"""flip / shapeless_vjp_heap_overflow: mx.compile(shapeless=True) of the VJP of mx.flip, called at a larger shape than traced, writes before the gradient's buffer and the process dies: Slice::vjp is a SliceUpdate keeping the traced start (n-1) and stride -1, and nothing re-checks the larger cotangent against that region
Minimal input: vjp of flip(x, axis=0), one shapeless compile called at x, g (2,4), then (3,4), then (5,4): heap corruption (abort). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import os
import subprocess
import sys

# MLX runs in a child that answers 10 (absent) or 11 (present): any other end of it,
# a signal or even exit(0) from inside MLX, means the VJP killed the process.
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

cf = mx.compile(lambda x, g: mx.vjp(lambda x: mx.flip(x, axis=0), [x], [g])[1][0], shapeless=True)
bad = []
for n in (2, 3, 5):   # the first call traces; the later ones reuse the trace at other shapes
    g = np.arange(1.0, 4 * n + 1).reshape(n, 4)
    try:
        got = cf(mx.zeros((n, 4)), mx.array(g, dtype=mx.float32))
        mx.eval(got)
    except Exception as e:
        sys.exit(print(f"VERDICT: defect absent (shapeless compile refused: {type(e).__name__}: {e})") or 10)
    have, want = np.array(got, dtype=np.float64), g[::-1]   # the rule: d x = g flipped back, at the new shape (or raise)
    ok = have.shape == want.shape and np.array_equal(have, want)
    bad += [] if ok else [n]
    print(f"grad:x at ({n},4): MLX {have.tolist()}, rule {want.tolist()}", "ok" if ok else "DIFFERS", flush=True)
sys.exit(print("VERDICT: defect " + (f"present (grad:x differs at n={bad})" if bad else "absent")) or (11 if bad else 10))

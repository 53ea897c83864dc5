#!/usr/bin/env python3
"""tril / shapeless_fused_overread: mx.compile(shapeless=True) of mx.tril (triu alike) called at a new shape gives wrong values without an error: the mask is an Arange of the traced length, and Compiled::output_shapes takes the max of its inputs' shapes without checking they broadcast, so the fused select reads the small mask buffer past its end
Minimal input: tril(x, -1), one shapeless compile called at x (2,4), then (3,4), then (64,4): rows differ from eager. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import os
import subprocess
import sys

# MLX runs in a child that answers 10 (absent) or 11 (present): any other end of it
# (a signal from the heap over-read) means the defect is present too.
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

cf = mx.compile(lambda x: mx.tril(x, -1), shapeless=True)
bad = []
for n in (2, 3, 64):   # the first call traces; the later ones reuse the trace at other shapes
    x = np.arange(1.0, 4 * n + 1).reshape(n, 4)
    try:
        got = cf(mx.array(x, dtype=mx.float32))
        mx.eval(got)
    except Exception as e:
        sys.exit(print(f"VERDICT: defect absent (shapeless compile refused: {type(e).__name__}: {e})") or 10)
    have, want = np.array(got, dtype=np.float64), np.tril(x, -1)   # the rule: eager's (numpy's) tril at the new shape, or raise
    rows = sorted(set(np.argwhere(have != want)[:, 0].tolist())) if have.shape == want.shape else "shape"
    bad += [n] if rows else []
    print(f"forward at x ({n},4): rows differing from the rule: {rows if rows else 'none'}")
sys.exit(print("VERDICT: defect " + (f"present (forward differs at n={bad})" if bad else "absent")) or (11 if bad else 10))

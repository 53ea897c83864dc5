#!/usr/bin/env python3
"""sum / shapeless_size_one_axis_crash: mx.compile(shapeless=True) of a reduction over an axis of size 1 kills the process on its first call (SIGSEGV): under dynamic tracing compute_reduce_shape keeps the Reduce of a size-1 axis in the graph (it may be larger at a later call), and evaluating that kept reduction crashes; without shapeless the reduction is elided and all is well
Minimal input: mx.compile(lambda x: mx.sum(x, axis=1), shapeless=True) called once at x (2,1): the process dies. Shows in mean, max, median, std (their forward, VJP and JVP). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import os
import subprocess
import sys

# MLX runs in a child that answers 10 (absent) or 11 (present): any other end of it,
# a signal or even exit(0) from inside MLX, means the compiled reduction killed the process.
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

x = np.array([[1.5], [-2.0]])
cf = mx.compile(lambda x: mx.sum(x, axis=1), shapeless=True)
print("calling the shapeless compile of sum over the size-1 axis 1 at x (2,1)", flush=True)
try:
    got = cf(mx.array(x, dtype=mx.float32))
    mx.eval(got)
except Exception as e:
    sys.exit(print(f"VERDICT: defect absent (shapeless compile refused: {type(e).__name__}: {e})") or 10)
have, want = np.array(got, dtype=np.float64), x.sum(axis=1)
ok = have.shape == want.shape and np.array_equal(have, want)
print(f"sum: MLX {have.tolist()}, rule {want.tolist()}", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + ("absent" if ok else "present (a wrong sum)")) or (10 if ok else 11))

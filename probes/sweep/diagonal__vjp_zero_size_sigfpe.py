#!/usr/bin/env python3
"""diagonal / vjp_zero_size_sigfpe: the VJP of mx.diagonal (so of mx.trace) of a 3-D array with a zero-size axis kills the process with SIGFPE (an integer division by zero): the scatter Diagonal's VJP builds writes into zeros of the input's shape, and with no element to write something divides by a size of 0; the 2-D case raises a ValueError instead of returning the zero-size gradient
Minimal input: vjp of diagonal(x, axis1=1, axis2=2) at x (0,3,4), cotangent (0,3): SIGFPE. MLX 0.32.4.
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

x, g = mx.zeros((0, 3, 4)), mx.zeros((0, 3))
print("vjp of diagonal(x, axis1=1, axis2=2) at x (0,3,4)", flush=True)
try:
    got = mx.vjp(lambda y: mx.diagonal(y, axis1=1, axis2=2), [x], [g])[1][0]
    mx.eval(got)
except Exception as e:   # refusing is wrong too (the gradient is an empty (0,3,4)), but not this crash
    sys.exit(print(f"VERDICT: defect absent (the VJP raised {type(e).__name__}: {e})") or 10)
ok = tuple(got.shape) == (0, 3, 4)
print(f"grad:x shape {tuple(got.shape)}, rule (0, 3, 4)", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + ("absent" if ok else "present (wrong shape)")) or (10 if ok else 11))

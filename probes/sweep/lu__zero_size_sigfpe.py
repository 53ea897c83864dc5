#!/usr/bin/env python3
"""lu / zero_size_sigfpe: mx.linalg.lu (and lu_factor) of a matrix with a zero-size dimension kills the process with SIGFPE (an integer division by zero) on the CPU, where an empty factorization (or a ValueError) is expected
Minimal input: mx.linalg.lu(mx.zeros((0, 0)), stream=mx.cpu): SIGFPE; (0, 3) and (2, 0, 0) too. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import os
import subprocess
import sys

# MLX runs in a child that answers 10 (absent) or 11 (present): any other end of it,
# a signal or even exit(0) from inside MLX, means the factorization killed the process.
if os.environ.get("REPRO_CHILD") != "1":
    rc = subprocess.run([sys.executable, *sys.argv], env={**os.environ, "REPRO_CHILD": "1"}).returncode
    sys.exit({10: 0, 11: 1, 125: 125}.get(rc) if rc in (10, 11, 125) else
             print(f"VERDICT: defect present (MLX ended the process: status {rc})") or 1)
try:
    import mlx.core as mx
except ImportError as e:
    sys.exit(print("cannot test:", e) or 125)

for name in ("lu", "lu_factor"):
    print(f"mx.linalg.{name} of a (0, 0) matrix on the CPU", flush=True)
    try:
        out = getattr(mx.linalg, name)(mx.zeros((0, 0)), stream=mx.cpu)
        mx.eval(out)
    except Exception as e:   # refusing an empty matrix is a choice, not this crash
        print(f"  raised {type(e).__name__}: {e}")
        continue
    print("  shapes", [tuple(o.shape) for o in out])
sys.exit(print("VERDICT: defect absent") or 10)

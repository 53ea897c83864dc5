#!/usr/bin/env python3
"""conv / zero_out_channels_sgemm_exit: mx.conv1d (conv2d, conv3d, conv_general, conv_transpose) with a weight of zero output channels calls SGEMM with a leading dimension of 0; the BLAS rejects it ("On entry to SGEMM parameter number 13 had an illegal value") and ends the process with status 0, mid-program, where an empty output (1, 6, 0) is expected
Minimal input: mx.conv1d(mx.ones((1, 8, 2)), mx.ones((0, 3, 2))) on the CPU: the process exits. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import os
import subprocess
import sys

# MLX runs in a child that answers 10 (absent) or 11 (present): any other end of it,
# a signal or even exit(0) from inside MLX, means the convolution ended the process.
if os.environ.get("REPRO_CHILD") != "1":
    rc = subprocess.run([sys.executable, *sys.argv], env={**os.environ, "REPRO_CHILD": "1"}).returncode
    sys.exit({10: 0, 11: 1, 125: 125}.get(rc) if rc in (10, 11, 125) else
             print(f"VERDICT: defect present (MLX ended the process: status {rc})") or 1)
try:
    import mlx.core as mx
except ImportError as e:
    sys.exit(print("cannot test:", e) or 125)

print("mx.conv1d of x (1, 8, 2) with a weight (0, 3, 2) on the CPU", flush=True)
try:
    y = mx.conv1d(mx.ones((1, 8, 2)), mx.ones((0, 3, 2)), stream=mx.cpu)
    mx.eval(y)
except Exception as e:   # refusing zero output channels is a choice, not this exit
    sys.exit(print(f"VERDICT: defect absent (raised {type(e).__name__}: {e})") or 10)
ok = tuple(y.shape) == (1, 6, 0)
print(f"output shape {tuple(y.shape)}, rule (1, 6, 0)", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + ("absent" if ok else "present (wrong shape)")) or (10 if ok else 11))

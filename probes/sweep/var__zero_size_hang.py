#!/usr/bin/env python3
"""var / zero_size_hang: mx.var (so mx.std) over an empty axis of an array made from numpy never returns: mx.var(mx.array(np.zeros((3, 0), np.float32)), axis=1) hangs at some calls (a race: in about half the processes, within 200 calls), while the same over mx.zeros((3, 0)) or over x + 0 gives NaN (0/0, as numpy); mean, sum and square of the same array return at once
Minimal input: x = mx.array(np.zeros((3, 0), np.float32)); mx.var(x, axis=1), 200 times: no answer in 30 s in one of up to 12 processes (the sweep's watchdog kills it: SIGKILL). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import os
import subprocess
import sys

# MLX runs in a child that answers 10 (absent) or 11 (present): no answer within the
# time limit (a hang) or any other end of it means the defect is present.
if os.environ.get("REPRO_CHILD") != "1":
    for _ in range(12):   # the hang is a race met by about half the processes: 12 miss it 1 time in 4000
        try:
            rc = subprocess.run([sys.executable, *sys.argv], env={**os.environ, "REPRO_CHILD": "1"},
                                timeout=30).returncode
        except subprocess.TimeoutExpired:
            sys.exit(print("VERDICT: defect present (mx.var did not return in 30 s)") or 1)
        if rc != 10:
            sys.exit({11: 1, 125: 125}.get(rc) if rc in (11, 125) else
                     print(f"VERDICT: defect present (MLX ended the process: status {rc})") or 1)
    sys.exit(0)
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

print("200 times: mx.var(x, axis=1) at a new x (3,0) made from numpy", flush=True)
for _ in range(200):   # it hangs at some calls, not all: 200 make one all but certain
    got = mx.var(mx.array(np.zeros((3, 0), np.float32)), axis=1)
    mx.eval(got)
have = np.array(got, dtype=np.float64)
ok = have.shape == (3,) and bool(np.all(np.isnan(have)))   # numpy: the variance of nothing is 0/0
print(f"var: MLX {have.tolist()}, rule [nan, nan, nan]", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + ("absent" if ok else "present (wrong value)")) or (10 if ok else 11))

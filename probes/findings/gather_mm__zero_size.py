#!/usr/bin/env python3
"""gather_mm / zero_size: sorted path with K = 0 or N = 0: the VJP kills the process (SIGFPE in the CPU kernel)
Minimal input: gmm/grid/zero_K/lhs/sorted; the VJP kills the process: process died (signal SIGFPE). MLX releases: 0.26.3 – 0.32.4 (≤ 0.25.2 – 0.26.2: the VJP raises [reshape] instead).
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


def f(a, b):
    return mx.gather_mm(a, b, lhs_indices=mx.array(lhs_indices, dtype=mx.uint32), sorted_indices=True)


a = mx.array(np.array([], dtype=np.float32).reshape((2, 2, 0)), dtype=mx.float32)
b = mx.array(np.array([], dtype=np.float32).reshape((2, 0, 2)), dtype=mx.float32)
lhs_indices = np.array([0, 1], dtype=np.int64).reshape((2,))
g = mx.ones((2, 2, 2), dtype=mx.float32)
# the float64 rule: Y_q = A[i_q] B[j_q]; dA[l] = sum over q with i_q = l of G_q B[j_q]^T; dB[l] = sum over q with j_q = l of A[i_q]^T G_q
want = {"forward": np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).reshape((2, 2, 2)), "grad:a": np.array([]).reshape((2, 2, 0)), "grad:b": np.array([]).reshape((2, 0, 2))}
try:
    mx.eval(f(a, b))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a, b], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 11)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (11 if bad else 10))

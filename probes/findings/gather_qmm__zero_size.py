#!/usr/bin/env python3
"""gather_qmm / zero_size: gather_qmm with M, N or K = 0: the forward or VJP kills the process (SIGFPE)
Minimal input: qmm4/grid/zero_K/lhs/sorted; the VJP kills the process: process died (signal SIGFPE). MLX releases: ≤ 0.25.2 – 0.32.4.
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


def f(x, scales, biases):
    return mx.gather_qmm(x, mx.array((codes.reshape(*codes.shape[:-1], -1, 8) << np.arange(0, 32, 4)).sum(-1).astype(np.uint32)), scales, biases, lhs_indices=mx.array(lhs_indices, dtype=mx.uint32), transpose=True, group_size=32, bits=4, sorted_indices=True)


x = mx.array(np.array([], dtype=np.float32).reshape((2, 1, 0)), dtype=mx.float32)
codes = np.array([], dtype=np.int64).reshape((2, 2, 0))
scales = mx.array(np.array([], dtype=np.float32).reshape((2, 2, 0)), dtype=mx.float32)
biases = mx.array(np.array([], dtype=np.float32).reshape((2, 2, 0)), dtype=mx.float32)
lhs_indices = np.array([0, 1], dtype=np.int64).reshape((2,))
g = mx.ones((2, 1, 2), dtype=mx.float32)
# the float64 rule: W = code * scale + bias per group along K; Y_q = x[i_q] W[j_q]^T; dx by the gather_mm rule; dscale = sum over the group of code * dW, dbias = sum over the group of dW
want = {"forward": np.array([0.0, 0.0, 0.0, 0.0]).reshape((2, 1, 2)), "grad:x": np.array([]).reshape((2, 1, 0)), "grad:scales": np.array([]).reshape((2, 2, 0)), "grad:biases": np.array([]).reshape((2, 2, 0))}
try:
    mx.eval(f(x, scales, biases))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [x, scales, biases], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 11)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (11 if bad else 10))

#!/usr/bin/env python3
"""pad / constant_value_grad: asked for the gradients of a and the constant together, Pad::vjp returns one gradient for two inputs and the process dies
Minimal input: pad(a=[1], 0, constant_values=c), both gradients: SIGSEGV. MLX releases: ≤ 0.25.2 – 0.32.4.
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


def f(a, c):
    return mx.pad(a, 0, mode="constant", constant_values=c)


a = mx.array(np.array([1.0], dtype=np.float32).reshape((1,)), dtype=mx.float32)
c = mx.array(np.array([3.0], dtype=np.float32).reshape(()), dtype=mx.float32)
g = mx.ones((1,), dtype=mx.float32)
# the float64 rule: d a[i] = sum of g over every output position that copies a[i]; d c = sum of g over the constant-padded positions when c is the constant, else 0
want = {"forward": np.array([1.0]).reshape((1,)), "grad:a": np.array([1.0]).reshape((1,)), "grad:c": np.array([0.0]).reshape(())}
try:
    mx.eval(f(a, c))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
try:
    (y,), grads = mx.vjp(f, [a, c], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {type(e).__name__}: {e})") or 11)
have = {name: np.array(x.astype(mx.float32), dtype=np.float64) for name, x in got.items()}
bad = [name for name, w in want.items() if not (have[name].shape == w.shape and np.allclose(have[name], w, rtol=3e-05, atol=3e-05, equal_nan=True))]   # |MLX - rule| <= atol + rtol |rule|, NaN matches NaN
for name, w in want.items():
    print(f"{name}: MLX {have[name].tolist()}, float64 rule {w.tolist()}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (11 if bad else 10))

#!/usr/bin/env python3
"""sign / shapeless_grad_shape: mx.compile(shapeless=True) of a gradient through sign, traced at one shape and called at another, returns the gradient in the traced shape (Sign::jvp builds zeros(primal.shape()), a Broadcast whose stored shape shapeless compile keeps)
Minimal input: grad of sum(sign(x)), one shapeless compile called at x (2,4), (3,4), (5,4): at (5,4) shape (3,4), an earlier call's. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

f = mx.grad(lambda x: mx.sum(mx.sign(x)))
rows = [[0.5, -1.0, 0.75, -0.25], [1.0, 0.5, -0.5, 1.25], [-0.75, 0.25, 1.0, -1.0], [1.0, -0.5, 0.25, 0.5], [-1.25, 0.75, -0.25, 1.0]]
xs = [mx.array(np.array(rows[:n], dtype=np.float32)) for n in (2, 3, 5)]
# the rule: a shapeless-compiled function gives what eager gives at each new shape, or raises;
# d sign(x)/dx = 0 (MLX's convention), so the gradient is zeros in x's own shape
cf = mx.compile(f, shapeless=True)
bad = []
for x in xs:   # the first call traces; the later ones reuse the trace at other shapes
    try:
        got = cf(x)
        mx.eval(got)
    except Exception as e:
        sys.exit(print(f"VERDICT: defect absent (shapeless compile refused: {type(e).__name__}: {e})") or 0)
    have, want = np.array(got, dtype=np.float64), np.zeros(x.shape)
    ok = have.shape == want.shape and np.allclose(have, want)
    bad += [] if ok else [x.shape]
    print(f"grad:x at x {x.shape}: MLX shape {have.shape}, rule shape {want.shape}", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + (f"present (grad:x differs at {bad})" if bad else "absent")) or (1 if bad else 0))

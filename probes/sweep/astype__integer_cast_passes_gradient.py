#!/usr/bin/env python3
"""astype / integer_cast_passes_gradient: the VJP and JVP of a cast to an integer or bool type pass the cotangent (tangent) through unchanged, where the cast is piecewise constant: its derivative is 0 between the steps (AsType::vjp/jvp cast back and forth only)
Minimal input: x = [0.3, 0.6, -0.45] (no step nearby), f(x) = astype(astype(x, T), float32) for T in int32, uint8, int8, bool: MLX's gradient is 1, the derivative 0. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x = mx.array(np.array([0.3, 0.6, -0.45], dtype=np.float32))
bad = []
for t in (mx.int32, mx.uint8, mx.int8, mx.bool_):
    def f(x, t=t):
        return x.astype(t).astype(mx.float32)
    # the rule: f is constant near each x (no value within 0.2 of a step), so f(x + h) - f(x) = 0
    step = np.array(f(x + 1e-2)) - np.array(f(x))
    grad = np.array(mx.grad(lambda x: mx.sum(f(x)))(x))
    jvp = np.array(mx.jvp(f, [x], [mx.ones(3)])[1][0])
    ok = np.all(step == 0) and np.all(grad == 0) and np.all(jvp == 0)
    bad += [] if ok else [str(t)]
    print(f"{t}: difference quotient {step / 1e-2}, MLX grad {grad}, jvp {jvp}", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)})" if bad else "absent")) or (1 if bad else 0))

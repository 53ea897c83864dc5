#!/usr/bin/env python3
"""elu / large_input_nan_gradient: nn.elu (and selu, ELU, SELU built on it) has a NaN gradient at large positive x, where it is x (derivative 1): mx.where(x > 0, x, alpha * (exp(x) - 1)) differentiates the branch it does not take, exp(x) overflows to inf, and where's VJP gives it 0 * inf = NaN
Minimal input: x = [3e4, 100, 1.5] (float32; exp overflows above about 88.7). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import mlx.nn as nn
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x = mx.array(np.array([3e4, 100.0, 1.5], dtype=np.float32))
bad = []
for name, f, slope in (("elu", nn.elu, 1.0), ("selu", nn.selu, 1.0507009873554805)):
    grad = np.array(mx.grad(lambda x: mx.sum(f(x)))(x), dtype=np.float64)
    # the rule: for x > 0, elu(x) = x and selu(x) = scale * x, so the derivative is 1 (scale)
    want = np.full(3, slope)
    ok = np.allclose(grad, want, rtol=1e-5)
    bad += [] if ok else [name]
    print(f"{name}: MLX grad {grad}, rule {want}", "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)})" if bad else "absent")) or (1 if bad else 0))

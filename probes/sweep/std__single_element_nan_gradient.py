#!/usr/bin/env python3
"""std / single_element_nan_gradient: the gradient of mx.std over an axis of size 1 is NaN, where std of one element is identically 0 (a constant: derivative 0); the rule divides by std (0 / 0)
Minimal input: grad of sum(std(x, axis=1)) at x = [[1.0], [2.0]]: [[nan], [nan]], rule [[0], [0]]. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

x = mx.array(np.array([[1.0], [2.0]], dtype=np.float32))
f = lambda x: mx.sum(mx.std(x, axis=1))
# the rule: std over one element is 0 for every x, so f(x + h) - f(x) = 0 and the gradient is 0
step = float(f(x + 0.25)) - float(f(x))
grad = np.array(mx.grad(f)(x))
print(f"f(x + 0.25) - f(x) = {step}; MLX grad {grad.ravel()}, rule [0, 0]")
bad = step != 0 or not np.all(grad == 0)
sys.exit(print("VERDICT: defect " + ("present (non-finite or non-zero gradient)" if bad else "absent")) or (1 if bad else 0))

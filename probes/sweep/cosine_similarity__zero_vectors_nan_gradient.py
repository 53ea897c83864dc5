#!/usr/bin/env python3
"""cosine_similarity / zero_vectors_nan_gradient: the gradient of nn.losses.cosine_similarity_loss at x1 = x2 = 0 is NaN, where the loss is x1.x2 / max(|x1| |x2|, eps) = x1.x2 / eps near 0 (a smooth quadratic: gradient 0); the norm's VJP at 0 is 0 / 0 and the max's unselected branch multiplies it by 0
Minimal input: x1 = x2 = zeros (3, 4): MLX NaN, rule 0. MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import mlx.nn as nn
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

z = mx.zeros((3, 4))


def f(a, b):
    return mx.sum(nn.losses.cosine_similarity_loss(a, b))


# the rule: where |a| |b| < eps (1e-8), f = sum(a * b) / eps, whose gradient (b / eps, a / eps) is 0 at
# a = b = 0; MLX's own value there agrees: f(h, 0) = 0 for any h
flat = float(f(z + 0.5, z)) - float(f(z, z))
grads = [np.array(g) for g in mx.grad(f, argnums=[0, 1])(z, z)]
print(f"f(0.5, 0) - f(0, 0) = {flat}; MLX grads {[g.ravel()[:2] for g in grads]}, rule 0")
bad = not all(np.all(g == 0) for g in grads)
sys.exit(print("VERDICT: defect " + ("present (NaN gradient)" if bad else "absent")) or (1 if bad else 0))

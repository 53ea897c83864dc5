#!/usr/bin/env python3
"""logcumsumexp / shapeless_zero_broadcast_shape: under mx.compile(shapeless=True) a fused elementwise graph of a zero-size array and a size-1 array has a size-1 axis where broadcasting gives 0: Compiled::output_shapes takes the largest size per axis (max(0, 1) = 1). logcumsumexp's VJP compares the cotangent with zeros({1}), so its gradient at a zero-size axis comes back (2, 1) for x (2, 0)
Minimal input: mx.compile(lambda a: mx.exp(a + mx.zeros((1,))), shapeless=True) at a (2,0): shape (2,1), eager (2,0). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(a):
    return mx.exp(a + mx.zeros((1,)))


a = mx.zeros((2, 0))
try:
    got = mx.compile(f, shapeless=True)(a)
    mx.eval(got)
except Exception as e:
    sys.exit(print("cannot test: compile raised", e) or 125)
want = np.broadcast_shapes((2, 0), (1,))   # (2, 0): an axis of 0 broadcast with 1 stays 0
ok = tuple(got.shape) == want
print(f"shapeless compile: shape {tuple(got.shape)}, eager {tuple(f(a).shape)}, broadcasting {want}",
      "ok" if ok else "DIFFERS")
sys.exit(print("VERDICT: defect " + ("absent" if ok else "present (wrong shape)")) or (0 if ok else 1))

#!/usr/bin/env python3
"""take_along_axis / vmap_vjp_zero_size_batch: vmap of the VJP of take_along_axis (a scatter-add into zeros) over arrays with a zero-size axis returns a batch of 1, not the mapped batch; the forward under vmap and other VJPs keep it (nn.losses.nll_loss shows it too)
Minimal input: vmap over 3 examples of x -> vjp(take_along_axis(x, i, axis=1)) with x (3, 0), i (3, 0) int32, cotangent (3, 0): shape (1, 3, 0), rule (3, 3, 0). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

i = mx.zeros((3, 0), mx.int32)


def grad(x, c):
    return mx.vjp(lambda x: mx.take_along_axis(x, i, axis=1), [x], [c])[1][0]


try:
    got = mx.vmap(grad)(mx.zeros((3, 3, 0)), mx.zeros((3, 3, 0)))
    mx.eval(got)
except Exception as e:
    sys.exit(print(f"VERDICT: defect absent (vmap refused: {type(e).__name__}: {e})") or 0)
# the rule: vmap stacks each example's gradient, (3, 0), on a new leading axis of 3
print(f"vmap of the VJP: shape {tuple(got.shape)}, rule (3, 3, 0); one example alone: {tuple(grad(mx.zeros((3, 0)), mx.zeros((3, 0))).shape)}")
bad = tuple(got.shape) != (3, 3, 0)
sys.exit(print("VERDICT: defect " + ("present (wrong batch)" if bad else "absent")) or (1 if bad else 0))

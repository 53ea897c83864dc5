#!/usr/bin/env python3
"""split / vmap_empty_parts_axis: vmap of mx.split with the batch on a non-leading axis, where the split axis has size 0 (every part empty), returns the parts with the batch axis misplaced: the first part is (batch, ...) but the later ones keep the batch where the input had it
Minimal input: vmap(lambda x: split(x, [1, 3], axis=1), in_axes=2) over x (3, 0, 3): parts (3, 3, 0), (0, 3, 3), (3, 0, 3); rule: each (3, 3, 0). MLX 0.32.4.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)


def f(x):
    return mx.split(x, [1, 3], axis=1)


# three examples of shape (3, 0), stacked on the last axis
parts = mx.vmap(f, in_axes=2)(mx.zeros((3, 0, 3)))
one = f(mx.zeros((3, 0)))
# the rule: vmap puts the batch first on each output: (3,) + each part's own shape
want = [(3,) + tuple(p.shape) for p in one]
got = [tuple(p.shape) for p in parts]
print(f"parts under vmap: {got}; rule: {want}")
bad = got != want
sys.exit(print("VERDICT: defect " + ("present (batch axis misplaced)" if bad else "absent")) or (1 if bad else 0))

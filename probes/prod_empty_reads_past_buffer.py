#!/usr/bin/env python3
"""prod (and sum) over every axis of a (0, 2) operand made from numpy: the CPU reduction reads an empty buffer
get_reduction_plan keeps only axes longer than 1, so the size-0 axis vanishes and 2 elements are reduced from
a buffer that holds none: the result is whatever memory holds (prod of nothing is 1, sum 0). The operand must
come from numpy: one built by mx.zeros or a reshape takes another plan and is right.
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

# the float64 rule: the product of no elements is 1, their sum 0
got = {"prod": set(), "sum": set()}
try:
    for i in range(50):   # other arrays come and go, so the empty buffer's neighbourhood changes
        mx.eval(mx.full((64,), float(i) + 0.5))
        a = mx.array(np.zeros((0, 2), dtype=np.float32))
        got["prod"].add(mx.prod(a).item())
        got["sum"].add(mx.sum(a).item())
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
want = {"prod": 1.0, "sum": 0.0}
bad = [k for k in want if got[k] != {want[k]}]
for k in want:
    print(f"{k}: MLX {sorted(got[k])[:4]}, float64 rule {want[k]}", "DIFFERS" if k in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({', '.join(bad)} differ)" if bad else "absent")) or (1 if bad else 0))

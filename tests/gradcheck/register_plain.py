"""A register class as a user's function: the op called plainly at the register's minimal
input, for gradcheck (tests/gradcheck/test_gradcheck_register.py; also run as a script in
a child process for the classes that kill it: `python register_plain.py ID`).

The differentiated operands are handed to gradcheck as their storage (plain contiguous
arrays); the catalog's views (a slice, a broadcast, a transpose) are applied inside the
function, as a user's code would apply them, since gradcheck sees values, not layouts.
"""
from __future__ import annotations

import sys

import numpy as np

from mlx_vjpcheck import gradcheck
from mlx_vjpcheck.cases import register
from mlx_vjpcheck.core import layout
from mlx_vjpcheck.oracles import bridge

# The register's transform -> (order, transforms) gradcheck is asked for.
ASK = {"": (1, ("vjp",)), "second_order": (2, ("vjp",)), "vmap": (1, ("vmap",)), "forward_mode": (1, ("jvp",))}


class Plain:
    def __init__(self, defect):
        s = defect.bound_scenario()
        self.call = bridge.Call(s)
        self.tensors = [s.operands[n] for n in s.wrt]
        self.inputs = tuple(bridge.array(bridge.host(layout.storage(t, np.float64), t.dtype), t.dtype)
                            for t in self.tensors)

    def __call__(self, *stores):
        viewed = []
        for st, t in zip(stores, self.tensors):
            for view in t.views:
                st = layout.apply_view(st, view, xp=bridge.mx())
            viewed.append(st)
        return self.call(*viewed)


def by_id(defect_id: str):
    return {d.id: d for d in register.load()}[defect_id]


def check(defect, fn=None, inputs=None):
    """gradcheck's report for the class (fn, inputs: an override of the plain call)."""
    order, transforms = ASK[defect.transform]
    if fn is None:
        plain = Plain(defect)
        fn, inputs = plain, plain.inputs
    return gradcheck(fn, inputs, order=order, transforms=transforms, raise_exception=False, shrink=0)


if __name__ == "__main__":
    report = check(by_id(sys.argv[1]))
    print(report.message())
    sys.exit(0 if report.passed else 1)

"""Ops with an integer output (argmax, argmin, argsort, argpartition,
searchsorted), shared by argreduce, argsort and searchsorted. MLX gives each a
VJP of zeros (the output is piecewise constant in the floating operands); the
harness judges it in two forms, params["form"]:

  indices   the integer output itself: forward the indices, every gradient 0
  weighted  x * indices (the indices broadcast against the operand x): the
            gradient flows to x through the product, d x = g * indices, and
            through the indices not at all, so a nonzero VJP of the integer
            primitive shows up in the sum

Ties make the indices jump under any perturbation; where MLX's choice is a
documented rule (the first maximum, the left or right insertion point) the
reference follows it and holds the indices fixed, as MLX's zero VJP does (the
convention scenarios); where the order is unspecified (argsort's, argpartition's
tied elements) the reference refuses to judge.
"""
from __future__ import annotations

import numpy as np

from ...core.numeric import ReferenceUndecided

FORMS = ("indices", "weighted")


def forward(index_fn, weighted: str):
    """The reference forward of either form, from index_fn(inputs, params) (float64 indices,
    already shaped to broadcast against the weighted operand)."""
    def reference(inp, params):
        idx = np.asarray(index_fn(inp, params), dtype=np.float64)
        if params.get("form", "indices") == "indices":
            return idx
        return np.asarray(inp[weighted]) * idx
    return reference


def vjp(index_fn, weighted: str):
    """Zeros for every operand; the weighted operand gets g * indices in the weighted form."""
    def reference_vjp(inp, g, params):
        out = {n: np.zeros(np.shape(v)) for n, v in inp.items()}
        if params.get("form", "indices") == "weighted":
            idx = np.asarray(index_fn(inp, params), dtype=np.float64)
            out[weighted] = np.asarray(g) * np.broadcast_to(idx, np.shape(g))
        return out
    return reference_vjp


def expression(call: str, params, names, weighted: str) -> str:
    """The call's text in the scenario's form."""
    return call if params.get("form", "indices") == "indices" else f"{names[weighted]} * {call}"


def refuse_ties(lanes, what: str) -> None:
    """Tied values in a lane: the order among them is unspecified, nothing to judge."""
    lanes = np.asarray(lanes)
    if lanes.size and lanes.ndim and np.any(np.diff(np.sort(lanes, axis=-1), axis=-1) == 0):
        raise ReferenceUndecided(f"{what}: tied values in a lane; MLX leaves their order unspecified")

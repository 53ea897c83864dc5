"""Catalog scenarios of the issue-20 op modules (reductions, shapes, matmul,
fft, search, custom transforms) built one way: operands already laid out
(_support/views.py), a cotangent of distinct small integers in the output's
shape (a cotangent of ones hides a misplaced element), and the same scenario
again in the other floating dtypes where a module asks for it.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...core import layout
from ...core.scenario import Scenario
from ...core.tensors import as_seen, hashed_ints, tensor

HALF = ("float16", "bfloat16")


def logical_inputs(operands: dict, integer=()) -> dict:
    """The float64 (complex128) logical value of each operand, as the reference sees it."""
    return {n: layout.logical(t, np.int64) if n in integer else as_seen(layout.logical(t), t.dtype)
            for n, t in operands.items()}


def cotangent_for(y, seed: int, dtype: str, mode: str = "random"):
    """A cotangent for output y: None (mode "ones"), or small integers ("random";
    "positive"; "nonzero": no zero entry), complex where y is complex."""
    y = np.asarray(y)
    if mode == "ones":
        return None
    g = hashed_ints(y.shape, seed + 1, -4, 5)
    if mode == "positive":
        g = np.abs(g) + 1
    elif mode == "nonzero":
        g = np.where(g == 0, 5.0, g)
    if np.iscomplexobj(y):
        return tensor(g + 1j * hashed_ints(y.shape, seed + 2, -4, 5), dtype="complex64")
    return tensor(g, dtype="float32" if dtype == "complex64" else dtype)


def case(op: str, name: str, operands: dict, params: dict, *, reference, wrt=None, integer=(), seed=0,
         cot="random", family="", desc="", tags=(), fd=False) -> Scenario:
    """One scenario of `op`: the output shape (and complexity) from the float64
    reference on the logical operands; wrt defaults to every floating operand."""
    y = reference(logical_inputs(operands, integer), params)
    floating = [n for n in operands if n not in integer]
    dtype = operands[(wrt or floating)[0]].dtype
    return Scenario(name=f"{op}/{name}", op=op, operands=dict(operands), wrt=tuple(wrt or floating),
                    params=dict(params), cotangent=cotangent_for(y, seed, dtype, cot),
                    fd_step=1.0 / 16 if fd else None, family=family or op, defect_tags=tuple(tags),
                    description=desc)


def retyped(s: Scenario, dtype: str, integer=(), tags=()) -> Scenario:
    """The same call in another floating dtype (small integers: exact in every one),
    with the defect tags that bite there (none unless given)."""
    ops = {n: (t if n in integer else dataclasses.replace(t, dtype=dtype)) for n, t in s.operands.items()}
    cot = s.cotangent
    if cot is not None and cot.dtype != "complex64":
        cot = dataclasses.replace(cot, dtype=dtype)
    return dataclasses.replace(s, name=f"{s.name}/{dtype}", operands=ops, cotangent=cot, fd_step=None,
                               defect_tags=tuple(tags))


def in_half_precision(scenarios, picks=2, integer=()) -> list:
    """The first `picks` real scenarios without known defects again in float16 and
    bfloat16 (a defect seen by an oracle that skips half precision would not show)."""
    real = [s for s in scenarios if all(t.dtype != "complex64" for t in s.operands.values())
            and not s.defect_tags]
    return [retyped(s, d, integer) for s in real[:picks] for d in HALF]

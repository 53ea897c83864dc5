"""Reductions over one axis, several or all, shared by logsumexp and softmax:
the reduced axes, the refusal of a group of -inf only (no derivative there),
the catalog's matrices, and the strategies' inputs (small integers, maybe
with -inf entries, never a whole group of them).
"""
from __future__ import annotations

import numpy as np

from ...core import draw as D
from ...core.numeric import ReferenceUndecided

NEG_INF = -np.inf

# Catalog values: every row of M_INF is finite somewhere.
M = [[1, -2, 3, 0], [2, 2, -1, 4], [-3, 1, 0, 2]]
M_INF = [[1, NEG_INF, 3, 0], [NEG_INF, NEG_INF, -1, 4], [-3, 1, 0, NEG_INF]]


def reduced_axes(params, ndim) -> tuple:
    """The reduced axes, non-negative and sorted (None: all of them)."""
    axis = params.get("axis")
    axes = range(ndim) if axis is None else ([axis] if isinstance(axis, int) else axis)
    return tuple(sorted(int(a) % ndim for a in axes))


def no_empty_group(x, axes, op):
    """A group of -inf only has no derivative: refuse to judge it."""
    if np.any(np.all(x == NEG_INF, axis=axes)):
        raise ReferenceUndecided(f"{op}: a reduced group is entirely -inf: no derivative there")


# --- fuzz strategies -----------------------------------------------------------------------------

def draw_axes(draw, rank):
    """One axis (maybe negative), all (None), or a subset of two."""
    kind = draw(D.choice(("one", "none", "pair")))
    if kind == "none" or (kind == "pair" and rank < 2):
        return None
    if kind == "one":
        return draw(D.irange(-rank, rank - 1))
    first = draw(D.irange(0, rank - 2))
    return [first, draw(D.irange(first + 1, rank - 1))]


def draw_inputs(draw):
    """(values, axis, description): small integers, maybe with -inf entries, but
    never a group of -inf only."""
    rank = draw(D.irange(1, 3))
    shape = tuple(draw(D.irange(1, 5)) for _ in range(rank))
    axis = draw_axes(draw, rank)
    values = D.hashed_ints(shape, draw(D.irange(0, 2**16)))
    infs = draw(D.choice(("none", "neg_inf")))
    if infs == "neg_inf":   # the lowest hashed value becomes -inf, unless its whole group would
        axes = reduced_axes({"axis": axis}, rank)
        mask = values == -4
        mask &= ~np.all(mask, axis=axes, keepdims=True)
        values = np.where(mask, NEG_INF, values)
    return values, axis, infs

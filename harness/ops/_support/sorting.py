"""The canonical sort / top-k / partition reference, shared by sort, topk and
partition, and their strategies' shared draws.

Along each lane the reference is the input permuted into ascending order,
y[p] = x[order[p]], optionally only its last `keep` entries (topk). The
reverse rule is the transposed permutation, dx[order[p]] = g[p] (a scatter,
not the gather the forward does). topk's and partition's output order is
unspecified, so their calls put each lane in ascending order (a gather by
the stop-gradient argsort): partition is then sort computed through
Partition, and `reference` / `reference_vjp` here are both ops' references.

Ties. With equal inputs the permutation is not unique and sort has no
derivative in general. But when the cotangent is the same at every output
position holding one tied value, <g, sort(x)> is locally a sum over the tied
block times that common value, which is smooth; its gradient is the same
whichever tied element the permutation sends where. The reference judges
exactly those cases and refuses (ReferenceUndecided) any other tie. The same
rule covers topk through its "extended" cotangent: zero at every sorted
position the output does not return.
"""
from __future__ import annotations

import numpy as np

from ...core import draw as D
from ...core.numeric import ReferenceUndecided
from .lanes import distinct_values, from_lanes, lanes_to_input, shape_and_axis, to_lanes

# --- float64 reference: the ascending lane, optionally only its last `keep` entries -----


def sort_axis(params):
    """The lane axis, MLX's default -1; None sorts the flattened array."""
    axis = params.get("axis", -1)
    return None if axis is None else int(axis)


def ascending(lane) -> np.ndarray:
    """The order that sorts one lane (stable: ties keep their input order)."""
    return np.argsort(np.asarray(lane), kind="stable")


def sorted_tail(x, axis, keep) -> np.ndarray:
    """Each lane sorted ascending, then only its `keep` largest entries (still ascending)."""
    lanes = np.sort(to_lanes(x, axis), axis=-1)
    return from_lanes(lanes[..., lanes.shape[-1] - keep:], axis)


def check_ties(values, extended, where):
    """The cotangent must be constant over every block of equal sorted values."""
    for p in range(1, len(values)):
        if values[p] == values[p - 1] and extended[p] != extended[p - 1]:
            raise ReferenceUndecided(f"{where}: tied value {values[p]} receives different cotangents "
                                     f"{extended[p - 1]} and {extended[p]}: no derivative there")


def sorted_tail_vjp(x, g, axis, keep, where) -> np.ndarray:
    """dx[order[p]] = extended[p], where `extended` is g on the last `keep` sorted
    positions and 0 on the rest."""
    xl, gl = to_lanes(x, axis), to_lanes(g, axis)
    n = xl.shape[-1]
    dx = np.zeros(xl.shape)
    for lane in np.ndindex(xl.shape[:-1]):
        order = ascending(xl[lane])
        extended = np.zeros(n)
        extended[n - keep:] = gl[lane]
        check_ties(xl[lane][order], extended, where)
        dx[lane][order] = extended
    return lanes_to_input(dx, np.shape(x), axis)


def lane_length(shape, axis) -> int:
    return int(np.prod(shape)) if axis is None else int(shape[axis])


def reference(inp, params):
    """Every lane in ascending order (sort; partition once its lanes are put in order)."""
    axis = sort_axis(params)
    return sorted_tail(inp["a"], axis, lane_length(np.shape(inp["a"]), axis))


def reference_vjp(inp, g, params):
    axis = sort_axis(params)
    n = lane_length(np.shape(inp["a"]), axis)
    return {"a": sorted_tail_vjp(inp["a"], g, axis, n, "sort")}


# --- catalog values ----------------------------------------------------------------------------

M = [[3, -1, 7, 0, 5], [2, 9, -4, 6, 1], [8, 4, -2, -6, 10]]   # distinct values
M_COT = [[1, -2, 3, 4, -1], [2, 1, -3, 1, 4], [-1, 3, 2, -2, 1]]


def value_cotangent(y_sorted, seed=0) -> np.ndarray:
    """A cotangent that is a function of the output value (so constant over ties)."""
    v = np.asarray(y_sorted, dtype=np.float64)
    return (np.floor(v) * 7 + 3 * seed) % 9 - 4


# --- fuzz strategies -----------------------------------------------------------------------------

def tie_values(shape, seed) -> np.ndarray:
    """Multiples of 4 from five levels, so lanes repeat values."""
    return 4.0 * D.hashed_ints(shape, seed, -2, 3)


def lane_shape_and_axis(draw):
    return shape_and_axis(draw, lambda rank: (-1,) + tuple(range(rank)) + (None,))


def draw_values(draw, shape, axis):
    """(values, mode): distinct multiples of 4 along each lane (no ties), or tied ones."""
    mode = draw(D.choice(("distinct", "ties")))
    seed = draw(D.irange(0, 2**16))
    return (distinct_values(shape, seed, axis) if mode == "distinct" else tie_values(shape, seed)), mode


def draw_cotangent(draw, y, extended_ok, mode, dtype):
    """A drawn cotangent when values are distinct; for ties one that is a function of
    the output value, zeroed where `extended_ok` says a tied block is cut."""
    if mode == "distinct":
        return D.cotangent(draw, y.shape, dtype)
    g = value_cotangent(y, draw(D.irange(0, 8))) * extended_ok
    return D.tensor(g, dtype=dtype), "value"

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

Complex input (complex64 calls, complex128 here). MLX documents no order for
complex values; 0.32.4 sorts them lexicographically, real part first, then
imaginary part (operator< in mlx/types/complex.h), and a value with a NaN in
either part counts as NaN (isnan there): the sort's NaN-aware comparator puts
every such value last, in input order (mlx/backend/cpu/sort.cpp). numpy's
complex order agrees except at NaN, so `ascending` builds MLX's order itself.
The cotangent moves unconjugated (a permutation is real-linear: its VJP is
the transposed permutation of g). A tie is exact equality of both parts.
Equal real parts with different imaginary parts are no tie: the order is
defined there, but it is not locally constant (a real perturbation reorders
the block), so sort is not differentiable there unless the cotangent is the
same over each block of equal real parts (and zero on a block topk cuts): the
catalog's `real_part_tie/value_cotangent` scenarios and the strategies' tied
complex lanes (`value_cotangent` of the real part) sit there, differentiable;
the `convention/real_part_tie` scenarios route different cotangents by MLX's
order (a convention, as for cummax), where difference-based oracles have
nothing to decide. The reference itself refuses only exact ties.
"""
from __future__ import annotations

import numpy as np

from ...core import draw as D
from ...core.numeric import ReferenceUndecided
from ...core.tensors import hashed_ints
from .lanes import distinct_values, from_lanes, lanes_to_input, shape_and_axis, to_lanes, with_layout
from .views import draw_layout

# --- float64 reference: the ascending lane, optionally only its last `keep` entries -----


def sort_axis(params):
    """The lane axis, MLX's default -1; None sorts the flattened array."""
    axis = params.get("axis", -1)
    return None if axis is None else int(axis)


def ascending(lanes) -> np.ndarray:
    """The order that sorts each lane along the last axis, MLX's (stable: ties keep
    their input order; NaN last). Complex: lexicographic, real part then imaginary
    part, a value with a NaN part last (see the module text)."""
    lanes = np.asarray(lanes)
    if not np.iscomplexobj(lanes):
        return np.argsort(lanes, axis=-1, kind="stable")
    nan = np.isnan(lanes.real) | np.isnan(lanes.imag)
    re, im = np.where(nan, 0.0, lanes.real), np.where(nan, 0.0, lanes.imag)
    return np.lexsort((im, re, nan), axis=-1)   # the last key is the primary one


def sorted_tail(x, axis, keep) -> np.ndarray:
    """Each lane sorted ascending, then only its `keep` largest entries (still ascending)."""
    lanes = to_lanes(x, axis)
    lanes = np.take_along_axis(lanes, ascending(lanes), axis=-1)
    return from_lanes(lanes[..., lanes.shape[-1] - keep:], axis)


def check_ties(values, extended, where):
    """The cotangent must be constant over every block of equal sorted values."""
    for p in range(1, len(values)):
        if values[p] == values[p - 1] and extended[p] != extended[p - 1]:
            raise ReferenceUndecided(f"{where}: tied value {values[p]} receives different cotangents "
                                     f"{extended[p - 1]} and {extended[p]}: no derivative there")


def sorted_tail_vjp(x, g, axis, keep, where) -> np.ndarray:
    """dx[order[p]] = extended[p], where `extended` is g on the last `keep` sorted
    positions and 0 on the rest (complex128 for a complex operand or cotangent: the
    cotangent moves unconjugated)."""
    xl, gl = to_lanes(x, axis), to_lanes(g, axis)
    n = xl.shape[-1]
    dtype = np.result_type(xl.dtype, gl.dtype)
    dx = np.zeros(xl.shape, dtype=dtype)
    for lane in np.ndindex(xl.shape[:-1]):
        order = ascending(xl[lane])
        extended = np.zeros(n, dtype=dtype)
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

# complex lanes whose real parts tie in blocks, the imaginary parts out of order within
# each block (so an order by real part alone routes differently): row 1 puts -0.0 and
# 0.0 in one block (equal real parts), row 2 adds exact ties (4+1j, -1+1j twice)
REAL_TIE = [[1 + 2j, 1 - 1j, 3 + 0j, 1 + 3j, -2 + 5j, 3 - 4j],
            [complex(-0.0, 2.0), 0 - 1j, 2 + 2j, 2 - 2j, 0 + 0j, -1 + 9j],
            [4 + 1j, -1 + 1j, 4 + 1j, 4 - 3j, -1 + 1j, 0 + 0j]]
# different cotangents within each block of REAL_TIE's first two rows (output positions)
REAL_TIE_COT = [[2 + 1j, -1 + 0j, 3 - 2j, 1 + 1j, -3 + 2j, 4 - 1j],
                [1 - 2j, 3 + 3j, -2 + 1j, 2 + 0j, -1 - 1j, 1 + 2j]]


def value_cotangent(y_sorted, seed=0) -> np.ndarray:
    """A cotangent that is a function of the output value (so constant over ties).
    Complex: a complex function of the real part alone, so constant over every block
    of equal real parts too (where a complex sort is differentiable)."""
    y = np.asarray(y_sorted)
    v = np.floor(np.real(y).astype(np.float64))
    g = (v * 7 + 3 * seed) % 9 - 4
    return g + 1j * ((v * 5 + seed) % 7 - 3) if np.iscomplexobj(y) else g


# --- fuzz strategies -----------------------------------------------------------------------------

def tie_values(shape, seed) -> np.ndarray:
    """Multiples of 4 from five levels, so lanes repeat values."""
    return 4.0 * D.hashed_ints(shape, seed, -2, 3)


def lane_shape_and_axis(draw):
    return shape_and_axis(draw, lambda rank: (-1,) + tuple(range(rank)) + (None,))


def draw_values(draw, shape, axis, dtype="float32"):
    """(values, mode): distinct multiples of 4 along each lane (no ties), or tied ones.
    complex64 adds small-integer imaginary parts: distinct real parts keep the order
    locally constant; tied real parts make blocks the imaginary part orders (exact
    ties where the imaginary parts agree too)."""
    mode = draw(D.choice(("distinct", "ties")))
    seed = draw(D.irange(0, 2**16))
    values = distinct_values(shape, seed, axis) if mode == "distinct" else tie_values(shape, seed)
    if dtype == "complex64":
        values = values + 1j * hashed_ints(np.shape(values), draw(D.irange(0, 2**16)), -2, 3)
    return values, mode


def draw_cotangent(draw, y, extended_ok, mode, dtype):
    """A drawn cotangent when values are distinct (complex64: with imaginary parts);
    for ties one that is a function of the output value (its real part, for complex:
    constant over each block of equal real parts), zeroed where `extended_ok` says a
    tied block is cut."""
    if mode == "distinct":
        if dtype != "complex64":
            return D.cotangent(draw, y.shape, dtype)
        cot, cmode = D.cotangent(draw, y.shape, "float32")   # the real parts; all ones stays None
        if cot is not None and cmode != "zero":
            imag = hashed_ints(y.shape, draw(D.irange(1, 2**16)), -3, 4)
            cot = D.tensor(np.asarray(cot.values, dtype=np.float64).reshape(y.shape) + 1j * imag, dtype=dtype)
        elif cot is not None:
            cot = D.tensor(np.zeros(y.shape), dtype=dtype)
        return cot, cmode
    g = value_cotangent(y, draw(D.irange(0, 8))) * extended_ok
    return D.tensor(g, dtype=dtype), "value"


# layouts a complex operand never takes: a broadcast repeats lanes (and, for partition, is
# the known broadcast_misroute defect of the real call)
TIES = ("broadcast",)


def draw_operand(draw, values, dtype):
    """The operand in a drawn layout: the real strategies' (contiguous, transposed,
    stride 2); complex64 values, which `with_layout` would cast to float64, take
    views.draw_layout's (every layout but a broadcast)."""
    if dtype == "complex64":
        return draw_layout(draw, values, dtype, exclude=TIES)[0]
    return with_layout(draw, values, dtype)

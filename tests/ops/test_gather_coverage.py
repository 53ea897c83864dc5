"""The gather pair's coverage matrix, enforced over the catalog.

For each gather path (the right-sorted fast path, the left-sorted path, the
unsorted scatter path), every cell below has at least one catalog scenario of
gather_mm and of gather_qmm, or an error input MLX must refuse (checked as a
refusal by the refusal oracle):
  * the given index array of rank 0, 1, 2 and 3;
  * float32, float16 and bfloat16 operands;
  * the left and the right operand with 0, 1 and 2 batch axes, with and
    without its index array (where the path allows it: the left-sorted path
    has a left index array and no right one, and the other way round);
  * M, N and K of zero.
The float64 reference handles the zero-size cells (empty outputs, zero
gradients). A negative control removes one cell's scenarios and the matrix
names that cell.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from mlx_vjpcheck.cases import catalog, expected
from mlx_vjpcheck.core import layout

PATHS = ("right_sorted", "left_sorted", "unsorted")
LHS, RHS = "lhs_indices", "rhs_indices"
OPERANDS = {"gather_mm": ("a", "b"), "gather_qmm": ("x", "codes")}


def _shape(s, name):
    return layout.logical(s.operands[name], np.int64 if name in s.info.integer_operands else np.float64).shape


def path_of(s) -> str:
    """The path MLX's flags select: sorted with exactly one index array, else unsorted."""
    left, right = LHS in s.operands, RHS in s.operands
    if s.params.get("sorted_indices") and left != right:
        return "left_sorted" if left else "right_sorted"
    return "unsorted"


def features(s) -> set:
    """The matrix cells one scenario covers (none without an index array)."""
    left, right = LHS in s.operands, RHS in s.operands
    if not (left or right):
        return set()
    p, (lname, rname) = path_of(s), OPERANDS[s.op]
    a, b = _shape(s, lname), _shape(s, rname)
    M, K = a[-2], a[-1]
    N = b[-2] if s.op == "gather_qmm" else b[-1]   # gather_qmm's codes are stored (N, K)
    out = {("rank", p, len(s.operands[k].shape)) for k in (LHS, RHS) if k in s.operands}
    out |= {("dtype", p, s.dtype), ("batch", p, "left", len(a) - 2, left), ("batch", p, "right", len(b) - 2, right)}
    return out | {("zero", p, dim) for dim, n in (("M", M), ("N", N), ("K", K)) if n == 0}


def _allowed(p, side, given) -> bool:
    """On a sorted path exactly the one index array is given."""
    if p == "unsorted":
        return True
    mine = "left" if p == "left_sorted" else "right"
    return given == (side == mine)


def cells() -> set:
    out = set()
    for p in PATHS:
        out |= {("rank", p, r) for r in range(4)}
        out |= {("dtype", p, d) for d in ("float32", "float16", "bfloat16")}
        out |= {("batch", p, side, axes, given) for side, axes, given
                in itertools.product(("left", "right"), (0, 1, 2), (True, False)) if _allowed(p, side, given)}
        out |= {("zero", p, d) for d in "MNK"}
    return out


def missing(scenarios) -> list:
    have = set().union(*(features(s) for s in scenarios))
    return sorted(cells() - have, key=str)


@pytest.fixture(scope="module")
def gathers():
    return {op: [s for s in catalog.catalog() if s.op == op] for op in OPERANDS}


@pytest.mark.parametrize("op", sorted(OPERANDS))
def test_every_cell_of_the_matrix_has_a_scenario(gathers, op):
    assert missing(gathers[op]) == []


def test_half_precision_gather_mm_cells_are_refusals(gathers):
    """MLX's CPU GatherMM takes float32 only: those cells are error inputs, which the
    catalog runs as refusals (the VJP must refuse them too)."""
    half = [s for s in gathers["gather_mm"] if s.dtype != "float32"]
    assert half and all(s.must_refuse for s in half)


def test_removing_a_cells_scenarios_is_caught(gathers):
    """Negative control: without the rank-3 scenarios, rank 3 is missing on every path."""
    kept = [s for s in gathers["gather_mm"] if ("rank", path_of(s), 3) not in features(s)]
    assert {c for c in missing(kept) if c[0] == "rank"} == {("rank", p, 3) for p in PATHS}


@pytest.mark.parametrize("op", sorted(OPERANDS))
def test_the_reference_handles_zero_size_dimensions(gathers, op):
    zero = [s for s in gathers[op] if any(c[0] == "zero" for c in features(s))]
    assert len(zero) >= 6
    for s in zero:
        exp = expected.expected(s)
        for w in s.wrt:
            g = exp[f"grad:{w}"]
            assert g.shape == expected.logical_inputs(s)[w].shape and not np.any(g), s.name
        assert not np.any(exp["forward"]), s.name   # empty, or (K = 0) a sum of nothing

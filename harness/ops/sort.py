"""sort: mx.sort(a, axis), MLX's Sort primitive (topk.py and partition.py reuse
the helpers here).

Along each lane the output is the input permuted into ascending order: y[p] =
x[order[p]]. The reverse rule is the transposed permutation, dx[order[p]] =
g[p] (a scatter, not the gather the forward does). Sort::vjp recomputes the
order with argsort and writes the cotangent back with put_along_axis.

Ties. With equal inputs the permutation is not unique and sort has no
derivative in general. But when the cotangent is the same at every output
position holding one tied value, <g, sort(x)> is locally a sum over the tied
block times that common value, which is smooth; its gradient is the same
whichever tied element the permutation sends where. The reference judges
exactly those cases and refuses (ReferenceUndecided) any other tie. The
same rule covers topk and partition through their "extended" cotangent:
zero at every sorted position the output does not return.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.numeric import ReferenceUndecided
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import tensor
from .cummax import distinct_values, shape_and_axis, with_layout
from .cumprod import from_lanes, lanes_to_input, to_lanes

# --- float64 reference: the ascending lane, optionally only its last `keep` entries -----


def sort_axis(params):
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


def reference(inp, lhs, rhs, params):
    axis = sort_axis(params)
    return sorted_tail(inp["a"], axis, lane_length(np.shape(inp["a"]), axis))


def reference_vjp(inp, g, lhs, rhs, params):
    axis = sort_axis(params)
    n = lane_length(np.shape(inp["a"]), axis)
    return {"a": sorted_tail_vjp(inp["a"], g, axis, n, "sort")}


# --- the MLX call ----------------------------------------------------------------------------

def mlx_call(ops, lhs, rhs, sorted_indices, params):
    import mlx.core as mx
    return mx.sort(ops["a"], axis=sort_axis(params))


def canonical(mx, y, axis):
    """y with each lane in ascending order, for ops whose output order is unspecified
    (topk, partition). A gather by the stop-gradient argsort, so the reordering's
    reverse is a scatter-add (the gather family's rule), not Sort::vjp."""
    ax = 0 if axis is None else axis
    return mx.take_along_axis(y, mx.argsort(mx.stop_gradient(y), axis=ax), axis=ax)


# --- catalog ---------------------------------------------------------------------------------

M = [[3, -1, 7, 0, 5], [2, 9, -4, 6, 1], [8, 4, -2, -6, 10]]   # distinct values
M_COT = [[1, -2, 3, 4, -1], [2, 1, -3, 1, 4], [-1, 3, 2, -2, 1]]


def value_cotangent(y_sorted, seed=0) -> np.ndarray:
    """A cotangent that is a function of the output value (so constant over ties)."""
    v = np.asarray(y_sorted, dtype=np.float64)
    return (np.floor(v) * 7 + 3 * seed) % 9 - 4


def _case(name, a, params, cot=None, desc=""):
    return Scenario(name=f"sort/{name}", op="sort", operands={"a": a}, wrt=("a",), params=params,
                    cotangent=None if cot is None else tensor(cot), family="sort", description=desc)


def scenarios() -> list:
    m, mc = np.array(M, dtype=np.float64), np.array(M_COT, dtype=np.float64)
    ties = np.array([[2, 5, 2, -1, 5], [3, 3, 3, 3, 3], [0, 1, 0, 1, 0]], dtype=np.float64)
    strided = np.full((3, 10), 50.0)
    strided[:, ::2] = m
    return [
        _case("axis_last", tensor(m), {"axis": -1}, mc),
        _case("axis0", tensor(m), {"axis": 0}, mc),
        _case("axis_minus2", tensor(m), {"axis": -2}, mc, desc="a negative axis that is not the last"),
        _case("axis1_of_3d", tensor(np.arange(24).reshape(2, 4, 3)[:, ::-1] * 1.0 - 9), {"axis": 1},
              np.arange(24).reshape(2, 4, 3) % 5 - 2.0, desc="a middle axis, every lane reversed"),
        _case("flattened/axis_none", tensor(m), {"axis": None}, mc.reshape(-1)),
        _case("already_sorted", tensor([[-3, 0, 2, 5]]), {"axis": -1}, [[1, 2, 3, 4]],
              desc="the identity permutation"),
        _case("reversed", tensor([[5, 2, 0, -3]]), {"axis": -1}, [[1, 2, 3, 4]]),
        _case("length1", tensor(m[:, :1]), {"axis": -1}, mc[:, :1]),
        _case("strided", tensor(strided, views=[{"op": "slice", "index": [[0, 3], [0, 10, 2]]}]),
              {"axis": -1}, mc, desc="a stride-2 window; the skipped values are 50"),
        _case("transposed/axis0", tensor(m.T, views=[{"op": "transpose", "axes": [1, 0]}]), {"axis": 0},
              mc, desc="a transposed view sorted along its first (strided) axis"),
        _case("ties/value_cotangent", tensor(ties), {"axis": -1}, value_cotangent(np.sort(ties, axis=-1)),
              desc="tied values with equal cotangents: the gradient does not depend on the tie-break"),
        _case("ties/axis0", tensor(ties.T), {"axis": 0}, value_cotangent(np.sort(ties.T, axis=0), 1)),
    ]


# --- fuzz strategy -------------------------------------------------------------------------

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


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape, axis = lane_shape_and_axis(draw)
    values, mode = draw_values(draw, shape, axis)
    params = {"axis": axis}
    y = reference({"a": values}, None, None, params)
    cot, cmode = draw_cotangent(draw, y, 1.0, mode, dtype)
    return D.finish(Scenario(name="", op="sort", operands={"a": with_layout(draw, values, dtype)},
                             wrt=("a",), cotangent=cot, params=params, family="sort",
                             description=f"generated: axis {axis}, {mode} values, cotangent {cmode}"))


# --- reproducer snippet ----------------------------------------------------------------------

LANES = r'''
INTEGER_OPERANDS = ()


def lanes(x, axis):
    return x.reshape(1, -1) if axis is None else np.moveaxis(x, axis, -1)


def unlanes(y, shape, axis):
    return y.reshape(shape) if axis is None else np.moveaxis(y, -1, axis)


def top_sorted(x, axis, keep):
    """Every lane ascending (insertion sort), then its `keep` largest entries."""
    xl = lanes(x, axis)
    out = np.zeros(xl.shape[:-1] + (keep,))
    for lane in np.ndindex(xl.shape[:-1]):
        vals = []
        for v in xl[lane]:
            at = len(vals)
            while at > 0 and vals[at - 1] > v:
                at -= 1
            vals.insert(at, v)
        out[lane] = vals[len(vals) - keep:]
    return out.reshape(-1) if axis is None else np.moveaxis(out, -1, axis)


def top_sorted_vjp(x, g, axis, keep):
    """Output q holds the (n - keep + q)-th smallest input: it gets g[q]. Tied inputs
    take the tied outputs in input order (the catalog's cotangents are equal there)."""
    xl, gl = lanes(x, axis), lanes(g, axis)
    n = xl.shape[-1]
    dx = np.zeros_like(xl)
    for lane in np.ndindex(xl.shape[:-1]):
        row = list(xl[lane])
        rank = [sum(1 for k in range(n) if row[k] < row[j] or (row[k] == row[j] and k < j))
                for j in range(n)]
        for j in range(n):
            q = rank[j] - (n - keep)
            if q >= 0:
                dx[lane + (j,)] = gl[lane + (q,)]
    return unlanes(dx, x.shape, axis)
'''

# The whole lane in ascending order: sort's reference, and partition's once its
# lanes are put in order (its order within each side is unspecified).
SORTED_LANES = r'''

def ref_forward(inp, lhs, rhs, params):
    n = inp["a"].size if params["axis"] is None else inp["a"].shape[params["axis"]]
    return top_sorted(inp["a"], params["axis"], n)


def ref_vjp(inp, g, lhs, rhs, params):
    n = inp["a"].size if params["axis"] is None else inp["a"].shape[params["axis"]]
    return {"a": top_sorted_vjp(inp["a"], g, params["axis"], n)}
'''

REPRO = LANES + SORTED_LANES + r'''

def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    return mx.sort(ops["a"], axis=params["axis"])
'''


OPS = (OpInfo(
    name="sort", summary="mx.sort (Sort): any axis, views, ties with equal cotangents",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, mlx_call=".ops.sort:mlx_call", scenarios=scenarios, strategy=fuzz_case,
    repro_source=REPRO),)

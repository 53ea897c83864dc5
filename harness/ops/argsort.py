"""argsort and argpartition: mx.argsort(a, axis) and mx.argpartition(a, kth, axis),
MLX's ArgSort and ArgPartition primitives, integer outputs whose VJPs are zeros.
Judged in the two forms of _support/indices.py: the indices themselves, and
a * the indices (d a = g * the indices, nothing through them).

argpartition promises only that position kth holds the index of the kth smallest
element (the rest of each lane is in no specified order), so its call returns
that index alone, its axis kept (mx.take of position kth). Ties: MLX specifies no
order among tied elements, so the reference refuses to judge a lane with ties.
The MLX calls are ops/repro/argsort.py.

Complex input (complex64): MLX documents no order for complex values; 0.32.4
sorts them lexicographically, real part first, then imaginary part
(mlx/types/complex.h; _support/sorting.py), which numpy's complex argsort
shares for finite values. A tie is exact equality of both parts (refused);
equal real parts are ordered by the imaginary part. The complex scenarios are
twins of plain rows (distinct real parts) and `convention/real_part_tie` rows
(kth inside such a block for argpartition), where the indices jump under a
real perturbation: the reference and vmap oracles judge them, forward mode
(and, in the weighted form, second order) has no derivative to compare. The
weighted form's gradient g * idx is unconjugated (idx is real).
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints
from ._support import expression as E
from ._support import indices as I
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.sorting import REAL_TIE
from ._support.views import draw_layout, laid_out, with_imaginary

FLOATS = ("float32", "float16", "bfloat16")


def _lanes(a, axis):
    a = np.asarray(a)
    return a.reshape(-1) if axis is None else np.moveaxis(a, axis, -1)


def argsort_index(inp, params):
    a, axis = np.asarray(inp["a"]), params.get("axis", -1)
    I.refuse_ties(_lanes(a, axis), "argsort")
    return np.argsort(a.reshape(-1) if axis is None else a, axis=-1 if axis is None else axis, kind="stable")


def argpartition_index(inp, params):
    a, axis, kth = np.asarray(inp["a"]), params.get("axis", -1), params["kth"]
    I.refuse_ties(_lanes(a, axis), "argpartition")
    order = np.argsort(a, axis=axis, kind="stable")
    return np.take(order, [kth], axis=axis)


def distinct(shape, seed):
    n = int(np.prod(shape, dtype=np.int64))
    return (np.random.RandomState(950 + seed).permutation(n) - n // 2).astype(np.float64).reshape(shape)


ARGSORT_ROWS = (
    ("last_axis", (3, 4), "contiguous", {"axis": -1}, ""),
    ("axis0", (3, 4), "transposed", {"axis": 0}, ""),
    ("flattened", (2, 3), "contiguous", {"axis": None}, "axis None: the flattened order"),
    ("reversed", (2, 5), "reversed", {"axis": 1}, "a negative stride"),
    ("zero_size", (0, 3), "contiguous", {"axis": -1}, ""),
    ("weighted/last_axis", (3, 4), "contiguous", {"axis": -1, "form": "weighted"}, ""),
    ("weighted/strided_axis0", (3, 2), "strided", {"axis": 0, "form": "weighted"}, ""),
)
ARGPARTITION_ROWS = (
    ("kth0", (3, 4), "contiguous", {"kth": 0, "axis": -1}, "the index of the minimum"),
    ("kth_middle_axis0", (5, 2), "transposed", {"kth": 2, "axis": 0}, ""),
    ("kth_last", (2, 4), "reversed", {"kth": 3, "axis": 1}, "the index of the maximum"),
    ("weighted/kth1", (3, 4), "contiguous", {"kth": 1, "axis": -1, "form": "weighted"}, ""),
    ("weighted/strided", (2, 3), "strided", {"kth": 2, "axis": -1, "form": "weighted"}, ""),
)


def _complex(values, seed):
    """`values` as real parts, small-integer imaginary parts added."""
    return np.asarray(values) + 1j * hashed_ints(np.shape(values), 600 + seed, -3, 4)


# REAL_TIE's first two rows: blocks of equal real parts, no exact tie
REAL_PART_TIES = np.array(REAL_TIE[:2])
ARGSORT_COMPLEX = (
    ("last_axis/complex64", _complex(distinct((3, 4), 0), 0), "contiguous", {"axis": -1}, "distinct real parts"),
    ("weighted/last_axis/complex64", _complex(distinct((3, 4), 5), 1), "contiguous", {"axis": -1, "form": "weighted"},
     "d a = g * idx, unconjugated"),
    ("convention/real_part_tie/complex64", REAL_PART_TIES, "contiguous", {"axis": -1},
     "equal real parts ordered by the imaginary part (lexicographic, as MLX)"),
    ("weighted/convention/real_part_tie/complex64", REAL_PART_TIES, "contiguous", {"axis": -1, "form": "weighted"},
     "the same, the indices held fixed (MLX's zero VJP)"),
)
ARGPARTITION_COMPLEX = (
    ("kth0/complex64", _complex(distinct((3, 4), 0), 2), "contiguous", {"kth": 0, "axis": -1}, "distinct real parts"),
    ("weighted/kth1/complex64", _complex(distinct((3, 4), 3), 3), "contiguous", {"kth": 1, "axis": -1,
                                                                                 "form": "weighted"}, ""),
    ("convention/real_part_tie/complex64", REAL_PART_TIES, "contiguous", {"kth": 2, "axis": -1},
     "kth inside a block of equal real parts: the imaginary part picks the index"),
    ("weighted/convention/real_part_tie/complex64", REAL_PART_TIES, "contiguous",
     {"kth": 2, "axis": -1, "form": "weighted"}, "the same, the index held fixed (MLX's zero VJP)"),
)


def _record(name, index, rows, complex_rows, expression, primitives) -> OpInfo:
    reference, reference_vjp = I.forward(index, "a"), I.vjp(index, "a")

    def scenarios():
        out = [case(name, row, {"a": laid_out(distinct(shape, k), lay)[0]}, params, reference=reference, seed=k,
                    family="sort", desc=desc, fd="weighted" in row and k % 2 == 1)
               for k, (row, shape, lay, params, desc) in enumerate(rows)]
        weighted = [s for s in out if "weighted" in s.name]
        cplx = [case(name, row, {"a": laid_out(v, lay, "complex64")[0]}, params, reference=reference, seed=20 + k,
                     family="sort", desc=desc) for k, (row, v, lay, params, desc) in enumerate(complex_rows)]
        return out + in_half_precision(out, picks=1) + in_half_precision(weighted, picks=1) + cplx

    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(tuple(dtypes)))
        rank = draw(D.irange(1, 3))
        shape = tuple(draw(D.irange(1, 4)) for _ in range(rank))
        axis = draw(D.irange(-rank, rank - 1))
        params = {"axis": axis, "form": draw(D.choice(I.FORMS))}
        if name == "argpartition":
            params["kth"] = draw(D.irange(0, shape[axis] - 1))
        # complex64: imaginary parts added to distinct real parts (no tie, no block of equal real parts)
        values = with_imaginary(draw, distinct(shape, draw(D.irange(0, 2**16))), dtype)
        a = draw_layout(draw, values, dtype, exclude=("broadcast",))[0]
        y = reference(logical_inputs({"a": a}), params)
        cot, mode = D.cotangent(draw, np.shape(y), dtype)
        return D.finish(Scenario(name="", op=name, operands={"a": a}, wrt=("a",), params=params, cotangent=cot,
                                 family="sort", description=f"generated: a{shape} {params}, cotangent {mode}"))

    return OpInfo(
        name=name, summary=f"mx.{name}: its uint32 indices, and a * the indices", operands=("a",),
        differentiable=("a",), reference=reference, reference_vjp=reference_vjp, exact=True,
        mlx_call=f".ops.repro.argsort:{name}",
        call_expression=lambda params, names: I.expression(expression(params, names), params, names, "a"),
        primitives=primitives, dtypes=FLOATS, complex=True, scenarios=scenarios, strategy=fuzz_case,
        rule="integer output: d a = 0 through the indices; weighted a * idx: d a = g * idx")


def _argsort_call(params, names):
    return E.call("mx.argsort", names["a"], axis=E.lit(params.get("axis", -1)))


def _argpartition_call(params, names):
    part = E.call("mx.argpartition", names["a"], E.lit(params["kth"]), axis=E.lit(params.get("axis", -1)))
    return E.call("mx.take", part, f"mx.array([{params['kth']}])", axis=E.lit(params.get("axis", -1)))


OPS = (_record("argsort", argsort_index, ARGSORT_ROWS, ARGSORT_COMPLEX, _argsort_call,
               ("ArgSort", "AsType", "Multiply", "Reshape")),
       _record("argpartition", argpartition_index, ARGPARTITION_ROWS, ARGPARTITION_COMPLEX, _argpartition_call,
               ("ArgPartition", "Gather", "AsType", "Multiply")))

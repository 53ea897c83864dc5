"""argmax and argmin: mx.argmax / mx.argmin(a, axis, keepdims), MLX's ArgReduce
primitive, whose VJP is zeros (an integer output). Judged in two forms
(_support/indices.py): "indices", the uint32 output itself (forward the indices,
d a = 0), and "weighted", a * argmax(a, axis, keepdims=True) (d a = g * the
indices: the product's gradient, plus nothing through the indices).

Ties: the first of the tied extremes is the index (MLX's convention and numpy's);
the weighted form holds it fixed, as MLX's zero VJP does. The ".../convention/..."
scenarios sit at ties. MLX refuses a zero-size operand (even a (0, 3) one along
its axis of 3) and, a forward bug, a 0-d operand with keepdims; the catalog and
the strategy have neither. The MLX calls are ops/repro/argreduce.py.

Complex input (complex64): MLX documents no order for complex values; 0.32.4
compares them lexicographically, real part first, then imaginary part
(mlx/types/complex.h), as numpy's argmax / argmin do, ties to the first index
as for real input (the reference is numpy's, which agrees on finite values).
The weighted form's gradient g * idx is unconjugated (idx is real). The
complex scenarios are twins of plain rows (distinct real parts) and
`convention/real_part_tie` rows, where equal real parts leave the choice to the
imaginary part (and an exact tie to the first index); the indices jump there
under a real perturbation: the reference and vmap oracles judge them, forward
mode (and, in the weighted form, second order) has no derivative to compare.
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
from ._support.views import draw_layout, draw_shape, laid_out, with_imaginary

FLOATS = ("float32", "float16", "bfloat16")


def _index(fn):
    def index(inp, params):
        a, axis = np.asarray(inp["a"]), params.get("axis")
        keep = params.get("form", "indices") == "weighted" or params.get("keepdims", False)
        if a.ndim == 0:
            return np.zeros(())
        return fn(a, axis=axis, keepdims=keep)
    return index


def distinct(shape, seed):
    n = int(np.prod(shape, dtype=np.int64))
    return (np.random.RandomState(800 + seed).permutation(n) - n // 2).astype(np.float64).reshape(shape)


TIES = np.array([[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]])

# (name, values, layout, params, description)
ROWS = (
    ("axis1", distinct((3, 4), 0), "contiguous", {"axis": 1}, ""),
    ("all", distinct((3, 4), 1), "contiguous", {"axis": None}, "the flattened index"),
    ("negative_axis_keepdims", distinct((2, 3, 4), 2), "contiguous", {"axis": -1, "keepdims": True}, ""),
    ("rank0", distinct((), 3), "contiguous", {"axis": None}, "a 0-d operand: index 0"),
    ("transposed", distinct((3, 4), 4), "transposed", {"axis": 0}, ""),
    ("reversed", distinct((2, 4), 5), "reversed", {"axis": -1}, "a negative stride"),
    ("convention/ties_first_index", TIES, "contiguous", {"axis": 1}, "ties: the first tied index (0 and 0)"),
    ("weighted/axis1", distinct((3, 4), 6), "contiguous", {"axis": 1, "form": "weighted"}, ""),
    ("weighted/all", distinct((2, 3), 7), "contiguous", {"axis": None, "form": "weighted"}, ""),
    ("weighted/strided", distinct((2, 3), 8), "strided", {"axis": 0, "form": "weighted"}, ""),
    ("weighted/broadcast", distinct((3, 4), 9), "broadcast", {"axis": -1, "form": "weighted"}, ""),
    ("weighted/convention/ties_first_index", TIES, "contiguous", {"axis": 1, "form": "weighted"},
     "ties: the first tied index, held fixed (MLX's zero VJP)"),
)


def _complex(values, seed):
    """`values` as real parts, small-integer imaginary parts added."""
    return np.asarray(values) + 1j * hashed_ints(np.shape(values), 500 + seed, -3, 4)


# equal real parts whose imaginary parts decide (1+3j twice: the first index), and a
# second row whose maximum real part is shared by three values
REAL_PART_TIES = np.array([[1 + 2j, 1 + 3j, 0 + 9j, 1 + 3j, -2 + 0j], [2 - 1j, 2 - 4j, 2 + 0j, -5 + 5j, 2 + 0j]])

COMPLEX_ROWS = (
    ("axis1/complex64", _complex(distinct((3, 4), 0), 0), "contiguous", {"axis": 1}, "distinct real parts"),
    ("weighted/axis1/complex64", _complex(distinct((3, 4), 6), 1), "contiguous", {"axis": 1, "form": "weighted"},
     "d a = g * idx, unconjugated"),
    ("weighted/strided/complex64", _complex(distinct((2, 3), 8), 2), "strided", {"axis": 0, "form": "weighted"}, ""),
    ("convention/real_part_tie/complex64", REAL_PART_TIES, "contiguous", {"axis": 1},
     "equal real parts: the imaginary part decides (lexicographic, as MLX), an exact tie the first index"),
    ("weighted/convention/real_part_tie/complex64", REAL_PART_TIES, "contiguous", {"axis": 1, "form": "weighted"},
     "the same, the index held fixed (MLX's zero VJP)"),
)


def _record(name: str, fn, sign: float) -> OpInfo:
    index = _index(fn)
    reference, reference_vjp = I.forward(index, "a"), I.vjp(index, "a")

    def scenarios():
        out = [case(name, row, {"a": laid_out(sign * v, lay)[0]}, params, reference=reference, seed=k,
                    family="argreduce", desc=desc, fd=k == 8)
               for k, (row, v, lay, params, desc) in enumerate(ROWS)]
        cplx = [case(name, row, {"a": laid_out(sign * v, lay, "complex64")[0]}, params, reference=reference,
                     seed=20 + k, family="argreduce", desc=desc)
                for k, (row, v, lay, params, desc) in enumerate(COMPLEX_ROWS)]
        return out + in_half_precision(out, picks=1) + in_half_precision(out[8:], picks=1) + cplx

    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(tuple(dtypes)))
        shape = draw_shape(draw, 0, 3, 4, zero=False)
        values = distinct(shape, draw(D.irange(0, 2**16))) if draw(D.irange(0, 3)) else \
            np.asarray(D.hashed_ints(shape, draw(D.irange(1, 2**16)), -1, 2))   # ties on purpose
        params = {"axis": draw(D.choice((None,) + tuple(range(-len(shape), len(shape))))),
                  "keepdims": bool(draw(D.irange(0, 1))), "form": draw(D.choice(I.FORMS))}
        if not shape:   # MLX 0.32.4's forward raises for a 0-d operand with keepdims (a vector size overflow)
            params.update(keepdims=False, form="indices")
        # complex64: imaginary parts added (distinct real parts still decide; tied ones leave it
        # to the imaginary part, an exact tie to the first index)
        a = draw_layout(draw, with_imaginary(draw, values, dtype), dtype, exclude=("broadcast",))[0]
        y = reference(logical_inputs({"a": a}), params)
        cot, mode = D.cotangent(draw, np.shape(y), dtype)
        return D.finish(Scenario(name="", op=name, operands={"a": a}, wrt=("a",), params=params, cotangent=cot,
                                 family="argreduce",
                                 description=f"generated: a{shape} {params}, cotangent {mode}"))

    def call_expression(params, names):
        weighted = params.get("form", "indices") == "weighted"
        call = E.call(f"mx.{name}", names["a"], axis=E.lit(params.get("axis")),
                      keepdims=E.lit(True if weighted else params.get("keepdims", False)))
        return I.expression(call, params, names, "a")

    return OpInfo(
        name=name, summary=f"mx.{name} (ArgReduce): its uint32 output, and a * the indices",
        operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp, exact=True,
        mlx_call=f".ops.repro.argreduce:{name}", call_expression=call_expression,
        primitives=("ArgReduce", "AsType", "Multiply", "Broadcast", "Flatten"), dtypes=FLOATS, complex=True,
        scenarios=scenarios,
        strategy=fuzz_case,
        rule="integer output: d a = 0 through the indices (the first tied extreme); "
             "weighted a * idx: d a = g * idx")


OPS = (_record("argmax", np.argmax, 1.0), _record("argmin", np.argmin, -1.0))

"""at_min: `a.at[key].minimum(v)`, MLX's Scatter (reduce Min) for index-array keys
and SliceUpdate (reduce Min) for int/slice keys.

Same forms, update modes, value design and claims as at_max (see its docstring),
with the minimum: the cotangent goes to the unique smallest of the distinct inputs
competing for a position; values are distinct multiples of 4, so there are no ties
between distinct inputs, and copies of one shared or broadcast value written to
the same position are one input. MLX gives each such copy the full cotangent
(tagged `tied_duplicates`), and with a.at[idx, start:stop] only the first column of
each window of v gets its cotangent (tagged `array_then_slice`); both expected to
fail on 0.32.4.
"""
from __future__ import annotations

from ..core.opinfo import OpInfo
from . import at_max as M
from . import at_set as S


def mlx_call(ops, lhs, rhs, sorted_indices, params):
    return S.mlx_scatter("min", ops, lhs, rhs, params)


def scenarios() -> list:
    return M.extremal_scenarios("at_min")


def fuzz_case(draw, dtypes=("float32",)):
    return M.extremal_fuzz("at_min", draw, dtypes)


OPS = (OpInfo(
    name="at_min", summary="a.at[idx].minimum(v) (Scatter / SliceUpdate Min): repeats, slices, no ties",
    operands=("a", "v"), differentiable=("a", "v"), index_arrays=("lhs", "rhs"),
    reference=S.reference_of("min"), reference_vjp=S.reference_vjp_of("min"), exact=True,
    mlx_call=".ops.at_min:mlx_call", scenarios=scenarios, strategy=fuzz_case,
    repro_source=M.extremal_repro("minimum", "min")),)

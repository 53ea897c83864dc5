"""logcumsumexp: mx.logcumsumexp(a, axis, reverse=..., inclusive=...), MLX's Scan
primitive with its LogAddExp reduce type (cumsum, cumprod, cummax and cummin are
the other Scan types, each its own op module).

Along the axis (axis None: the flattened array) y_i = log sum_{j in S(i)} exp(x_j),
S(i) the scan window (j <= i; j < i exclusive; mirrored when reversed), so an
exclusive scan's first output has an empty window and is -inf. The reverse rule:
d x_j = sum over the outputs i whose window holds j of g_i exp(x_j - y_i) (the
softmax weight of x_j in window i). Scan::vjp computes it as a logcumsumexp of
log|g| - y in the other direction, split into the positive and negative parts of
g: the flags, zero and negative cotangents, and -inf inputs are what the catalog
varies. A window of -inf only has no derivative: the reference refuses it.

Known defect (MLX 0.32.4): that log|g| is not differentiable where g is 0, so the
VJP of the VJP with respect to the cotangent (second order, and any Hessian
whose cotangent depends on x) is NaN there, though the VJP is linear in g. The
catalog's cotangents have no zero entry except in the tagged scenario. The MLX
call is ops/repro/logcumsumexp.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.numeric import ReferenceUndecided
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, logical_inputs
from ._support.lanes import SCAN_FLAGS, flag_name, from_lanes, lanes_to_input, summed, to_lanes
from ._support.views import draw_layout, laid_out

OP = "logcumsumexp"


def _flags(params):
    axis = params.get("axis")
    return (None if axis is None else int(axis)), bool(params.get("reverse", False)), \
        bool(params.get("inclusive", True))


def reference(inp, params):
    axis, rev, inc = _flags(params)
    x = to_lanes(inp["a"], axis)
    y = np.full(x.shape, -np.inf, dtype=x.dtype if np.iscomplexobj(x) else np.float64)
    n = x.shape[-1]
    for i in range(n):
        window = summed(i, n, rev, inc)
        if window and np.iscomplexobj(x):   # the principal Log (the catalog keeps away from its cut)
            y[..., i] = np.log(np.sum(np.exp(x[..., window]), axis=-1))
        elif window:
            y[..., i] = np.logaddexp.reduce(x[..., window], axis=-1)
    return from_lanes(y, axis)


def reference_vjp(inp, g, params):
    axis, rev, inc = _flags(params)
    x, gl = to_lanes(inp["a"], axis), to_lanes(g, axis)
    y = to_lanes(reference(inp, params), axis)
    dx = np.zeros(x.shape, dtype=np.result_type(x.dtype, gl.dtype, np.float64))
    n = x.shape[-1]
    for i in range(n):
        window = summed(i, n, rev, inc)
        if window and np.any(np.isneginf(np.real(y[..., i]))):
            raise ReferenceUndecided("logcumsumexp: a window of -inf only has no derivative")
        for j in window:   # complex: conj(d y_i / d x_j) g_i (MLX's convention; the branch drops out)
            dx[..., j] += gl[..., i] * np.conj(np.exp(x[..., j] - y[..., i]))
    return {"a": lanes_to_input(dx, np.shape(inp["a"]), axis)}


# --- catalog -------------------------------------------------------------------------------------

def _case(name, values, params, layout="contiguous", seed=0, cot="nonzero", desc="", fd=False, tags=()):
    return case(OP, name, {"a": laid_out(values, layout)[0]}, params, reference=reference, seed=seed,
                cot=cot, family="scan", desc=desc, fd=fd, tags=tags)


def scenarios() -> list:
    a = seeded_ints((3, 4), 900)
    flags = [(axis, rev, inc) for axis in (1, 0) for rev, inc in SCAN_FLAGS]
    out = [_case(f"axis{axis}/{flag_name(rev, inc)}", a, {"axis": axis, "reverse": rev, "inclusive": inc},
                 seed=k, fd=k == 0) for k, (axis, rev, inc) in enumerate(flags)]
    inf = np.array([[1.0, -np.inf, 2.0, 0.0], [-1.0, 3.0, -np.inf, -np.inf]])
    out += [
        _case("axis_none", seeded_ints((2, 3), 901), {"axis": None}, seed=10, desc="the flattened array"),
        _case("rank0", np.array(2.0), {"axis": None}, seed=11, desc="a 0-d operand: shape (1,)"),
        _case("negative_axis/reverse/exclusive", seeded_ints((2, 3, 2), 902), {"axis": -2, "reverse": True,
                                                                               "inclusive": False}, seed=12),
        _case("length1/exclusive", seeded_ints((3, 1), 903), {"axis": 1, "inclusive": False}, seed=13,
              desc="every window empty: the output is -inf, the gradient 0"),
        _case("neg_inf_inputs", inf, {"axis": 1}, seed=14, desc="-inf entries (never a whole window)"),
        _case("positive_cotangent", a, {"axis": 1, "reverse": True}, seed=15, cot="positive",
              desc="only the positive part of g (the negative one is empty)"),
        _case("ones_cotangent", a, {"axis": 0}, seed=16, cot="ones", desc=""),
        _case("defect/second_order_zero_cotangent", np.array([1.0, 2.0, 3.0]), {"axis": 0}, seed=20,
              cot="random", tags=("second_order_zero_cotangent",),
              desc="g = [-3, 0, 3]: the VJP is linear in g, but MLX builds it from log|g|, so its "
                   "derivative with respect to g is NaN where g is 0"),
        _case("strided", seeded_ints((2, 3), 904), {"axis": 1}, "strided", seed=17),
        _case("transposed", seeded_ints((3, 4), 905), {"axis": 0, "inclusive": False}, "transposed", seed=18),
        _case("reversed", seeded_ints((2, 4), 906), {"axis": -1, "reverse": True}, "reversed", seed=19),
    ]
    return out + complex_scenarios()


def complex_values(shape, seed):
    """Small integers with imaginary parts in {-1/2, 0, 1/2}: every window's sum of
    exponentials stays off the principal Log's cut, where MLX's pairwise branch agrees."""
    return seeded_ints(shape, seed) + 0.5j * seeded_ints(shape, seed + 50, -1, 2)


def complex_scenarios() -> list:
    """complex64 (tagged: MLX 0.32.4's Scan::vjp, LogAddExp case, builds the VJP from
    log|g| and the sign of g's real part and takes no conjugate, so the imaginary part of
    g is lost and exp(x_j - y_i) is not conjugated)."""
    def cx(name, values, params, layout="contiguous", seed=0, cot="nonzero", desc=""):
        return case(OP, name, {"a": laid_out(values, layout, "complex64")[0]}, params, reference=reference,
                    seed=seed, cot=cot, family="scan", desc=desc, tags=(COMPLEX_CLASS,))
    return [
        cx("complex/axis1", complex_values((3, 4), 910), {"axis": 1}, seed=30,
           desc="complex g and x: MLX drops g's imaginary part and does not conjugate"),
        cx("complex/axis0/reverse", complex_values((3, 4), 911), {"axis": 0, "reverse": True}, "transposed",
           seed=31),
        cx("complex/ones_cotangent", complex_values((2, 3), 912), {"axis": -1}, seed=32, cot="ones",
           desc="g = 1 (real): the missing conjugate alone"),
        cx("complex/single_element", np.array([0j]), {"axis": 0}, seed=33,
           desc="one element (the identity): g comes back without its imaginary part"),
    ]


# MLX 0.32.4: Scan::vjp (LogAddExp) on complex input is wrong (the register's class).
COMPLEX_CLASS = "complex_logaddexp_scan_vjp"


# --- fuzz strategy -------------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(tuple(dtypes)))
    rank = draw(D.irange(1, 3))
    shape = tuple(draw(D.irange(1, 4)) for _ in range(rank))
    params = {"axis": draw(D.choice((None,) + tuple(range(-rank, rank)))),
              "reverse": bool(draw(D.irange(0, 1))), "inclusive": bool(draw(D.irange(0, 1)))}
    values = D.hashed_ints(shape, draw(D.irange(0, 2**16)))
    if dtype == "complex64":   # imaginary parts in {-1/2, 0, 1/2}: off the Log's cut (complex_values)
        values = values + 0.5j * D.hashed_ints(shape, draw(D.irange(0, 2**16)), -1, 2)
    a = draw_layout(draw, values, dtype)[0]
    y = reference(logical_inputs({"a": a}), params)
    cot, mode = D.cotangent(draw, np.shape(y), dtype)
    return D.finish(Scenario(name="", op=OP, operands={"a": a}, wrt=("a",), params=params, cotangent=cot,
                             family="scan", description=f"generated: a{shape} {params}, cotangent {mode}"))


def call_expression(params, names) -> str:
    return E.call("mx.logcumsumexp", names["a"], axis=E.lit(params.get("axis")),
                  reverse=E.lit(params.get("reverse", False)), inclusive=E.lit(params.get("inclusive", True)))


OPS = (OpInfo(
    name=OP, known_defects=(KnownDefect("second_order_zero_cotangent", revealed_by="second_order"),
                            KnownDefect(COMPLEX_CLASS)),
    summary="mx.logcumsumexp (Scan, LogAddExp): flags, axis None, -inf inputs, signs of g",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    mlx_call=".ops.repro.logcumsumexp:mlx_call", call_expression=call_expression, primitives=("Scan", "Reshape"),
    # float32 only: MLX takes float16 and bfloat16, but its VJP is a chain of log, exp and a
    # logcumsumexp whose half-precision error (about 1e-2 relative on these inputs) has no
    # stated bound the harness could judge it by.
    dtypes=("float32",), complex=True, scenarios=scenarios, strategy=fuzz_case,
    rule="y_i = log sum over the window S(i) of exp(x_j); d x_j = sum over windows i holding j of "
         "g_i exp(x_j - y_i)"),)

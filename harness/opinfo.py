"""The op registry: one declarative record per op (after PyTorch's OpInfo).

A record names the operands in call order, which of them are differentiable,
the float64 reference and its VJP, and where the MLX implementation lives (an
import path, so this module and everything on the validation path stay free
of mlx). Generic code (runner, validator, native export, fuzzer) consumes the
registry and never names an op itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import reference as ref


@dataclass(frozen=True)
class OpInfo:
    name: str
    operands: tuple          # call order
    differentiable: tuple    # operands a VJP may be taken with respect to
    reference: Callable      # (inputs: dict, lhs, rhs, params) -> Y
    reference_vjp: Callable  # (inputs, G, lhs, rhs, params) -> {operand: grad}
    mlx_impl: str            # "module:function" taking (operands, lhs, rhs, sorted, params)
    integer_operands: tuple = ()   # held fixed, never perturbed or differentiated
    has_sorted_flag: bool = True   # False: the catalog emits one variant, not sorted/unsorted


def _gmm(inp, lhs, rhs, params):
    return ref.gather_mm(inp["a"], inp["b"], lhs, rhs)


def _gmm_vjp(inp, g, lhs, rhs, params):
    return ref.gather_mm_vjp(inp["a"], inp["b"], g, lhs, rhs)


def _qargs(params):
    return {"group_size": params["group_size"], "transpose": params.get("transpose", True)}


def _gqmm(inp, lhs, rhs, params):
    return ref.gather_qmm(inp["x"], inp["codes"], inp["scales"], inp["biases"], lhs, rhs,
                          **_qargs(params))


def _gqmm_vjp(inp, g, lhs, rhs, params):
    return ref.gather_qmm_vjp(inp["x"], inp["codes"], inp["scales"], inp["biases"], g, lhs,
                              rhs, **_qargs(params))


OPS = {
    "gather_mm": OpInfo("gather_mm", ("a", "b"), ("a", "b"), _gmm, _gmm_vjp,
                        "harness.mlx_ops:gather_mm"),
    "gather_qmm": OpInfo("gather_qmm", ("x", "codes", "scales", "biases"),
                         ("x", "scales", "biases"), _gqmm, _gqmm_vjp,
                         "harness.mlx_ops:gather_qmm", integer_operands=("codes",)),
}


def register(info: OpInfo) -> OpInfo:
    """Extension point for further gather-like ops (the fuzzer's family targets)."""
    OPS[info.name] = info
    return info


PLUGINS_ENV = "MLX_VJPCHECK_PLUGINS"


def load_plugins() -> None:
    """Import the comma-separated modules in $MLX_VJPCHECK_PLUGINS; each calls register()."""
    import importlib
    import os
    for mod in filter(None, os.environ.get(PLUGINS_ENV, "").split(",")):
        importlib.import_module(mod.strip())


def get(name: str) -> OpInfo:
    try:
        return OPS[name]
    except KeyError:
        raise ValueError(f"unknown op {name!r}; registered: {', '.join(sorted(OPS))}") from None


from . import family  # noqa: F401,E402  registers the gather family

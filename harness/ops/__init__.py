"""The ops under test: one module each, listed here. This list is the registry.

An op module defines its float64 reference and VJP, its catalog scenarios
and its fuzz strategy, names its MLX call (a standalone file in ops/repro/)
and declares them on `OPS`, a tuple of `harness.core.opinfo.OpInfo` records
(one record per op; a module may declare variants of one op together, as
cummax and cummin). Shared building blocks live in ops/_support/; an op
module imports no other op module. Adding an op: write
`harness/ops/<name>.py` (and its call in `ops/repro/<name>.py`) and add one
line to MODULES below. Nothing registers itself on import.

Ops from outside the package (experiments, tests) come through
$MLX_VJPCHECK_PLUGINS (core/plugins.py): modules with an `OPS` tuple.
"""
from __future__ import annotations

import importlib

from ..core.plugins import PLUGINS_ENV, PluginError, modules as plugin_modules

__all__ = ["MODULES", "PLUGINS_ENV", "PluginError", "registry", "get", "names", "first_patch", "module_of"]

# One line per op module, in listing order.
MODULES = (
    "gather_mm",
    "gather_qmm",
    "gather_family",
    "cumsum",
    "quantized_matmul",
    "block_masked_mm",
    "conv_general",
    "hadamard_transform",
    "rms_norm",
    "layer_norm",
    "rope",
    "sdpa",
    "cumprod",
    "cummax",
    "sort",
    "topk",
    "partition",
    "logsumexp",
    "softmax",
    "segmented_mm",
    "at_set",
    "at_max",
    "at_multiply",
    "masked_scatter",
    "slice_update",
    "pad",
    "as_strided",
    # elementwise, comparison and logical ops (issue 20, table-driven)
    "elementwise",
    "binary",
    "comparison",
    # reductions, shapes, matmul, fft, search and the rest (issue 20)
    "shapes",
    "reduce",
    "fft",
    "matmul",
    "addmm",
    "argreduce",
    "logcumsumexp",
    "searchsorted",
    "argsort",
    "full",
    "depends",
    "custom",
)

_REGISTRY: dict = {}


def _records_of(module) -> tuple:
    ops = getattr(module, "OPS", None)
    if not isinstance(ops, tuple) or not ops:
        raise PluginError(f"{module.__name__} defines no OPS tuple of OpInfo records")
    return ops


def _load() -> dict:
    modules = [importlib.import_module(f".{m}", __name__) for m in MODULES]
    modules += [m for m in plugin_modules() if hasattr(m, "OPS")]
    registry = {}
    for module in modules:
        for info in _records_of(module):
            if info.name in registry:
                raise PluginError(f"op {info.name!r} is declared twice ({module.__name__})")
            registry[info.name] = info
    return registry


def registry() -> dict:
    """name -> OpInfo, in listing order (built-in ops, then plugins)."""
    if not _REGISTRY:
        _REGISTRY.update(_load())
    return _REGISTRY


def get(name: str):
    try:
        return registry()[name]
    except KeyError:
        raise ValueError(f"unknown op {name!r}; registered: {', '.join(registry())}") from None


def names() -> list:
    return list(registry())


def first_patch() -> tuple:
    """The ops this project's first patch is about (OpInfo.first_patch), for the gate's
    scope (judging/gate_verdict.TARGET). Built-in ops only: a plugin cannot widen the gate."""
    modules = [importlib.import_module(f".{m}", __name__) for m in MODULES]
    return tuple(info.name for m in modules for info in _records_of(m) if info.first_patch)


def module_of(name: str) -> str:
    """The dotted name of the built-in module that declares op `name` ('' for a plugin's op):
    where `register add` tells a person to declare a new KnownDefect."""
    for m in MODULES:
        module = importlib.import_module(f".{m}", __name__)
        if any(info.name == name for info in _records_of(module)):
            return module.__name__
    return ""

"""The ops under test: one module each, listed here. This list is the registry.

An op module defines its float64 reference and VJP, its MLX call, its catalog
scenarios, its fuzz strategy and its reproducer snippet, and declares them on
`OPS`, a tuple of `harness.core.opinfo.OpInfo` records (one record per op; the
gather family declares six). Adding an op: write `harness/ops/<name>.py` and
add one line to MODULES below. Nothing registers itself on import.

Ops from outside the package (experiments, tests) come through
$MLX_VJPCHECK_PLUGINS: comma-separated module names, each exposing `OPS`.
"""
from __future__ import annotations

import importlib
import os

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
    "cummin",
    "sort",
    "topk",
    "partition",
    "logsumexp",
    "softmax",
    "segmented_mm",
    "at_set",
    "at_max",
    "at_min",
    "at_multiply",
    "masked_scatter",
    "slice_update",
    "pad",
    "as_strided",
)

PLUGINS_ENV = "MLX_VJPCHECK_PLUGINS"

_REGISTRY: dict = {}


class PluginError(ImportError):
    """A module named in $MLX_VJPCHECK_PLUGINS cannot be used."""


def _records_of(module) -> tuple:
    ops = getattr(module, "OPS", None)
    if not isinstance(ops, tuple) or not ops:
        raise PluginError(f"{module.__name__} defines no OPS tuple of OpInfo records")
    return ops


def _load() -> dict:
    modules = [importlib.import_module(f".{m}", __name__) for m in MODULES]
    for name in filter(None, (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(","))):
        try:
            modules.append(importlib.import_module(name))
        except Exception as e:
            raise PluginError(f"${PLUGINS_ENV}: cannot import {name!r} "
                              f"({type(e).__name__}: {e})") from None
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


def dtype_of(s) -> str:
    """The floating dtype a scenario runs in: its first differentiable operand's."""
    return s.operands[get(s.op).differentiable[0]].dtype

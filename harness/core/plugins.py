"""Extensions from outside the package: $MLX_VJPCHECK_PLUGINS names modules
(comma-separated) that declare more op records (`OPS`) and/or more oracles
(`ORACLES`). They travel to worker processes through the environment, which
is why they are named there and not registered in memory.
"""
from __future__ import annotations

import importlib
import os

PLUGINS_ENV = "MLX_VJPCHECK_PLUGINS"


class PluginError(ImportError):
    """A module named in $MLX_VJPCHECK_PLUGINS cannot be used."""


def names() -> list:
    return [n for n in (m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",")) if n]


def modules() -> list:
    """The plugin modules, imported (each must declare OPS or ORACLES)."""
    out = []
    for name in names():
        try:
            module = importlib.import_module(name)
        except Exception as e:
            raise PluginError(f"${PLUGINS_ENV}: cannot import {name!r} "
                              f"({type(e).__name__}: {e})") from None
        if not any(isinstance(getattr(module, k, None), tuple) for k in ("OPS", "ORACLES")):
            raise PluginError(f"{name} defines neither an OPS nor an ORACLES tuple")
        out.append(module)
    return out

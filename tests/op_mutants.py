"""Helpers for the scan, sorting and reduction op tests: plug a float64 numpy
VJP into an op's MLX call through mx.custom_function, route the op through it
for one test, and list the catalog scenarios that reject it.

API: use_ops (the registry, plus any op module not yet in ops.MODULES through
the plugin variable), numpy_vjp, install, statuses, caught. `caught` counts a
scenario only when it passes with MLX's own VJP, so a scenario that fails for
another reason never credits a mutant; test_op_scans checks that an honest
numpy VJP installed the same way passes.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from mlx_vjpcheck import ops as registry
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.running import devices, execute

PACKAGE = "mlx_vjpcheck.ops"


def unlisted_modules() -> list:
    """Op modules present in harness/ops/ but not (yet) in ops.MODULES."""
    here = Path(registry.__file__).parent
    return sorted(p.stem for p in here.glob("*.py")
                  if p.stem != "__init__" and p.stem not in registry.MODULES)


def use_ops(monkeypatch):
    """The registry with every op module, listed or not (listed ones never twice)."""
    names = ",".join(f"{PACKAGE}.{m}" for m in unlisted_modules())
    if names:
        monkeypatch.setenv(registry.PLUGINS_ENV, names)
    else:
        monkeypatch.delenv(registry.PLUGINS_ENV, raising=False)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    return registry.registry()


def _np(x, mx):
    x = x[0] if isinstance(x, (list, tuple)) else x
    return np.array(x.astype(mx.float32), dtype=np.float64)


def numpy_vjp(core, vjp, post=None):
    """An mlx_call whose forward is core(mx, a, params) (then post(mx, y, params)) and
    whose VJP is vjp(x, g, y, params) in float64 numpy, y being core's output."""
    def call(ops_, lhs, rhs, sorted_indices, params):
        import mlx.core as mx
        f = mx.custom_function(lambda a: core(mx, a, params))

        @f.vjp
        def backward(primals, cotangent, output):
            a = primals[0] if isinstance(primals, (list, tuple)) else primals
            dx = vjp(_np(a, mx), _np(cotangent, mx), _np(output, mx), params)
            return mx.array(np.asarray(dx, dtype=np.float32), dtype=a.dtype)
        y = f(ops_["a"])
        return post(mx, y, params) if post is not None else y
    return call


_CALLS = {}


def installed_call(ops_, lhs, rhs, sorted_indices, params):
    return _CALLS["current"](ops_, lhs, rhs, sorted_indices, params)


def install(monkeypatch, op, call):
    """Route `op` through `call` (an mlx_call) for the rest of the test."""
    info = registry.registry()[op]
    _CALLS["current"] = call
    monkeypatch.setitem(registry.registry(), op, dataclasses.replace(info, mlx_call="op_mutants:installed_call"))


def statuses(op) -> dict:
    """Catalog scenario name -> status on the CPU, with the op as currently installed."""
    devices.select("cpu")
    return {s.name: execute.run(s, "cpu")["status"] for s in catalog.catalog() if s.op == op}


def caught(monkeypatch, op, call) -> list:
    """Scenarios that pass honestly and do not pass with `call` installed."""
    honest = statuses(op)
    install(monkeypatch, op, call)
    return [name for name, st in statuses(op).items() if honest.get(name) == "pass" and st != "pass"]

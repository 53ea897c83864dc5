"""Helpers for the tests of the scatter, slice, pad and as_strided ops
(tests/test_op_at_*.py, test_op_masked_scatter.py, test_op_slice_update.py,
test_op_pad.py, test_op_as_strided.py).

* use_plugins(monkeypatch): registers those op modules through
  $MLX_VJPCHECK_PLUGINS (only the ones ops.MODULES does not list yet, so the tests
  pass before and after the modules are added there) and resets the registry.
* caught(monkeypatch, op, backward): the catalog scenarios of `op` that pass with
  MLX's own VJP, carry no defect tag, and fail once the op's MLX call gets
  `backward(ctx) -> {operand: gradient}` as its VJP (through mx.custom_function).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.core import opinfo
from mlx_vjpcheck.running import devices, execute

MINE = ("at_set", "at_max", "at_min", "at_multiply", "masked_scatter", "slice_update", "pad",
        "as_strided")


def use_plugins(monkeypatch):
    missing = [f"mlx_vjpcheck.ops.{m}" for m in MINE if m not in ops.MODULES]
    if missing:
        monkeypatch.setenv(ops.PLUGINS_ENV, ",".join(missing))
    else:
        monkeypatch.delenv(ops.PLUGINS_ENV, raising=False)
    monkeypatch.setattr(ops, "_REGISTRY", {})
    return ops.registry()


@dataclass
class Ctx:
    """What a mutant VJP sees: every operand and the cotangent as float64/int64
    numpy, the call's index arrays and params, and MLX's own gradients on demand."""
    op: str
    names: list
    operands: dict
    cot: np.ndarray
    lhs: object
    rhs: object
    params: dict
    honest: object

    def reference_vjp(self, **changed):
        """The float64 reference VJP under changed params: a wrong formula, exactly."""
        grads = ops.get(self.op).reference_vjp(self.operands, self.cot, self.lhs, self.rhs,
                                               dict(self.params, **changed))
        return {n: grads[n] for n in self.names}


def _numpy(x, dtype=np.float64):
    return None if x is None else np.asarray(x).astype(dtype)


def _mutant_call(op, info, backward):
    original = opinfo.resolve(info.mlx_call)
    names = list(info.differentiable)

    def call(ops_, lhs, rhs, sorted_indices, params):
        import mlx.core as mx

        def inner(*xs):
            return original(dict(ops_, **dict(zip(names, xs))), lhs, rhs, sorted_indices, params)
        f = mx.custom_function(inner)

        @f.vjp
        def vjp(primals, cotangent, output):
            prim = list(primals) if isinstance(primals, (list, tuple)) else [primals]
            operands = {n: _numpy(v, np.int64 if n in info.integer_operands else np.float64)
                        for n, v in ops_.items()}
            operands.update({n: _numpy(p) for n, p in zip(names, prim)})
            ctx = Ctx(op, names, operands, _numpy(cotangent), _numpy(lhs, np.int64), _numpy(rhs, np.int64),
                      params, lambda: dict(zip(names, mx.vjp(inner, prim, [cotangent])[1])))
            grads = backward(ctx)
            out = [g if isinstance(g, mx.array) else mx.array(np.ascontiguousarray(g, dtype=np.float32))
                   for g in (grads[n] for n in names)]
            return out[0] if len(out) == 1 else tuple(out)
        return f(*[ops_[n] for n in names])
    return call


_CALLS = {}


def installed_call(ops_, lhs, rhs, sorted_indices, params):
    return _CALLS["current"](ops_, lhs, rhs, sorted_indices, params)


def install(monkeypatch, op, backward):
    info = ops.get(op)
    _CALLS["current"] = _mutant_call(op, info, backward)
    monkeypatch.setitem(ops.registry(), op,
                        dataclasses.replace(info, mlx_call="scatter_slice_mutants:installed_call"))


_HONEST: dict = {}


def honest_passes(op) -> list:
    """Untagged catalog scenarios of op that pass with MLX's own VJP (cached per session)."""
    if op not in _HONEST:
        devices.select("cpu")
        mine = [s for s in catalog.catalog() if s.op == op and not s.defect_tags]
        _HONEST[op] = [s for s in mine if execute.run(s, "cpu")["status"] == "pass"]
    return _HONEST[op]


def caught(monkeypatch, op, backward) -> list:
    scenarios = honest_passes(op)
    install(monkeypatch, op, backward)
    devices.select("cpu")
    return [s.name for s in scenarios if execute.run(s, "cpu")["status"] == "fail"]


def statuses(op) -> dict:
    """Catalog scenario name -> (status, defect tags) with MLX's own VJP."""
    devices.select("cpu")
    return {s.name: (execute.run(s, "cpu")["status"], s.defect_tags)
            for s in catalog.catalog() if s.op == op}

"""Helpers for tests/test_op_{quantized_matmul,block_masked_mm,conv_general,
hadamard_transform}.py: load an op module into the registry whether or not it is
listed in ops.MODULES yet, and plug a deliberately wrong VJP into an op through
mx.custom_function.

A mutant is a plausible wrong reverse rule written in float64 numpy:
mutant(inputs, g, params) -> {operand: gradient}, with `inputs` the logical
operands (integer operands as int64) and `g` the cotangent. The forward stays
MLX's own call; only the VJP is replaced.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.core import opinfo
from mlx_vjpcheck.running import devices, execute

PACKAGE = "mlx_vjpcheck.ops"


def load(monkeypatch, module: str):
    """Make the registry include harness/ops/<module>.py: through the plugin variable
    until the module is in MODULES, never twice."""
    if module not in ops.MODULES:
        monkeypatch.setenv(ops.PLUGINS_ENV, f"{PACKAGE}.{module}")
    else:
        monkeypatch.delenv(ops.PLUGINS_ENV, raising=False)
    monkeypatch.setattr(ops, "_REGISTRY", {})
    return ops.registry()


def scenarios(op) -> list:
    return [s for s in catalog.catalog() if s.op == op]


_CURRENT = {}


def current_call(ops_, lhs, rhs, sorted_indices, params):
    return _CURRENT["call"](ops_, lhs, rhs, sorted_indices, params)


def _mutated(info, mutant):
    def call(ops_, lhs, rhs, sorted_indices, params):
        import mlx.core as mx
        f = opinfo.resolve(info.mlx_call)
        names = [n for n in info.differentiable if n in ops_]

        def inner(*xs):
            return f(dict(ops_, **dict(zip(names, xs))), lhs, rhs, sorted_indices, params)
        wrapped = mx.custom_function(inner)

        @wrapped.vjp
        def backward(primals, cotangent, output):
            prim = list(primals) if isinstance(primals, (list, tuple)) else [primals]
            inputs = {n: (np.asarray(v, dtype=np.int64) if n in info.integer_operands
                          else np.array(v.astype(mx.float32), dtype=np.float64)) for n, v in ops_.items()}
            inputs.update({n: np.array(p.astype(mx.float32), dtype=np.float64) for n, p in zip(names, prim)})
            cot = cotangent[0] if isinstance(cotangent, (list, tuple)) else cotangent
            grads = mutant(inputs, np.array(cot.astype(mx.float32), dtype=np.float64), params)
            out = [mx.array(np.asarray(grads[n], dtype=np.float32), dtype=p.dtype) for n, p in zip(names, prim)]
            return out[0] if len(out) == 1 else tuple(out)
        return wrapped(*[ops_[n] for n in names])
    return call


def install(monkeypatch, op, mutant):
    """Route `op`'s MLX call through a custom function whose VJP is `mutant`."""
    info = ops.registry()[op]
    _CURRENT["call"] = _mutated(info, mutant)
    monkeypatch.setitem(ops.registry(), op, dataclasses.replace(info, mlx_call="qmm_conv_mutants:current_call"))


def rejected_by(monkeypatch, op, mutant) -> list:
    """Catalog scenarios of `op` that pass honestly and fail (or raise) under the mutant."""
    devices.select("cpu")
    scs = scenarios(op)
    honest = {s.name: execute.run(s, "cpu")["status"] for s in scs}
    install(monkeypatch, op, mutant)
    return [s.name for s in scs if honest[s.name] == "pass" and execute.run(s, "cpu")["status"] != "pass"]


def honest_wrapper_passes(monkeypatch, op, reference_vjp) -> bool:
    """Control for the mechanism: the reference VJP itself, plugged in the same way,
    changes no verdict of a scenario without a known MLX defect (those tagged with one
    may start passing: the wrapper replaces the defective rule)."""
    devices.select("cpu")
    scs = [s for s in scenarios(op) if not s.defect_tags]
    honest = [execute.run(s, "cpu")["status"] for s in scs]
    install(monkeypatch, op, lambda inp, g, params: reference_vjp(inp, g, None, None, params))
    return [execute.run(s, "cpu")["status"] for s in scs] == honest


def probe_verdict(name: str):
    """(exit code, stdout) of probes/findings/<name> run on the CPU."""
    import subprocess
    import sys
    from pathlib import Path
    probe = Path(__file__).resolve().parent.parent / "probes" / "findings" / name
    proc = subprocess.run([sys.executable, str(probe), "--device", "cpu"], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout + proc.stderr

"""The one way tests plant a wrong VJP into MLX: an op's own MLX call wrapped
in mx.custom_function whose VJP is a deliberately wrong rule, then the
catalog judged with it in place.

A mutant is backward(ctx) -> {operand: gradient} (numpy or MLX arrays); ctx
(a Ctx) holds the differentiated operands and every other operand as float64
/ int64 numpy, the cotangent, the params, MLX's own gradients (`honest()`),
MLX's gradients of the same call under other params or cotangent (`true()`),
and the float64 reference VJP under changed params (`reference()`). The
forward stays MLX's own; only the reverse rule changes.

`statuses(op, mutant)` judges the op's catalog scenarios in this process
(running.execute.run, the same path as `run`) with the mutant bound to each
scenario's op record; `caught(op, mutant)` lists the scenarios that pass with
MLX's own VJP and not with the mutant. A scenario that fails for another
reason never credits a mutant, and `honest_control(op)` checks the mechanism
itself: the float64 reference VJP planted the same way changes no verdict of
an untagged scenario.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog, expected
from mlx_vjpcheck.core import opinfo
from mlx_vjpcheck.core import verdict
from mlx_vjpcheck.running import devices, execute

DISPATCH = "helpers.wrong_vjp:planted"
_PLANTED: dict = {}


def _mx():
    import mlx.core as mx
    return mx


def _numpy(x, dtype=np.float64):
    mx = _mx()
    if isinstance(x, mx.array):
        if x.dtype == mx.complex64:
            return np.array(x).astype(np.complex128)
        x = x.astype(mx.float32) if mx.issubdtype(x.dtype, mx.floating) else x
    return np.asarray(x).astype(dtype)


@dataclass
class Ctx:
    s: object            # the scenario being judged (bound)
    names: list          # the differentiated operands, in call order
    params: dict
    _call: object = None
    _mlx_operands: dict = None
    _mlx_cot: object = None

    # numpy views, made on first use: a mutant written in MLX ops (traceable under vmap,
    # compile and grad) never asks for them, so nothing is evaluated while tracing.
    @property
    def operands(self) -> dict:
        """Every operand, float64 (complex128 for complex, int64 for integer ones)."""
        ints = self.s.info.integer_operands
        return {n: _numpy(v, np.int64 if n in ints else np.float64) for n, v in self._mlx_operands.items()}

    @property
    def cot(self) -> np.ndarray:
        return _numpy(self._mlx_cot)

    def true(self, cot=None, operands=None, **params) -> dict:
        """MLX's own gradients of the call, optionally under other params, cotangent or
        (non-differentiated) operands."""
        mx = _mx()
        p, base = dict(self.params, **params), dict(self._mlx_operands, **(operands or {}))
        f = lambda *xs: self._call(dict(base, **dict(zip(self.names, xs))), p)  # noqa: E731
        _, grads = mx.vjp(f, [base[n] for n in self.names], [self._mlx_cot if cot is None else cot])
        return dict(zip(self.names, grads))

    def honest(self) -> dict:
        """MLX's own gradients, as float64 numpy."""
        return {n: _numpy(g) for n, g in self.true().items()}

    def reference(self, **changed) -> dict:
        """The float64 reference VJP (hand-written, or the reference differentiated within
        its stated bound), optionally under changed params: a wrong formula, exactly."""
        grads = expected.reference_vjp(self.s.info, self.operands, self.cot, dict(self.params, **changed),
                                       tuple(self.names))
        return {n: grads[n] for n in self.names}


def _mutated(s, original, backward):
    names = list(s.wrt)

    def call(operands, params):
        mx = _mx()
        inner = lambda *xs: original(dict(operands, **dict(zip(names, xs))), params)  # noqa: E731
        f = mx.custom_function(inner)

        @f.vjp
        def f_vjp(primals, cotangent, output):
            prim = list(primals) if isinstance(primals, (list, tuple)) else [primals]
            cot = cotangent[0] if isinstance(cotangent, (list, tuple)) else cotangent
            ctx = Ctx(s, names, params, original, dict(operands, **dict(zip(names, prim))), cot)
            grads = backward(ctx)
            out = [g if isinstance(g, mx.array) else mx.array(np.array(g, dtype=np.complex64 if np.iscomplexobj(g)
                                                                           else np.float32))   # 0-d stays 0-d
                   for g in (grads[n] for n in names)]
            out = [g.astype(p.dtype) for g, p in zip(out, prim)]
            return out[0] if len(out) == 1 else tuple(out)
        return f(*[operands[n] for n in names])
    return call


def planted(operands, params):
    """The MLX call of the scenario being judged, with its mutant in place."""
    return _PLANTED["call"](operands, params)


def plant(s, backward, traceable=False):
    """The scenario bound to a copy of its op record whose call has the mutant VJP.
    `traceable`: the mutant is written in MLX ops (ctx.true() and MLX arithmetic), so
    the transform oracles judge it too; a numpy rule cannot be traced, and they skip it."""
    original = opinfo.resolve(s.info.mlx_call)
    _PLANTED["call"] = _mutated(s, original, backward)
    info = dataclasses.replace(s.info, mlx_call=DISPATCH)
    if not traceable:
        info = dataclasses.replace(info, second_order=False, vmap=False, compile=False)
    return dataclasses.replace(s, info=info)


_CATALOG: list = []


def scenarios(op, untagged=False) -> list:
    """The op's catalog scenarios that can run in this process (the catalog built once
    per process; a call whose known defect kills the process is left to the runner)."""
    if not _CATALOG:
        _CATALOG.extend(catalog.catalog())
    return [s for s in _CATALOG if s.op == op and not s.kills_process and not (untagged and s.defect_tags)]


FIRST_ORDER = ("reference", "exact_zero", "fd", "refusal")   # the checks a numpy mutant faces


def _status(rec: dict, traceable: bool) -> str:
    """The record's verdict; for a numpy mutant, the first-order oracles' alone (the
    transform oracles skip it, so MLX's own VJP is held to the same checks)."""
    if traceable:
        return rec["status"]
    if rec["status"] == "crashed":
        return "crashed"
    return verdict.status([c for c in rec["checks"] if c["kind"] in FIRST_ORDER], rec["error"])


def _judge(s, backward=None, traceable=False, full=False) -> str:
    """The verdict of one scenario: in full (MLX's own VJP, every oracle), or as a
    planted mutant faces it (a numpy mutant: the first-order oracles only)."""
    devices.select("cpu")
    rec = execute.run(s if backward is None else plant(s, backward, traceable), "cpu")
    return rec["status"] if full else _status(rec, traceable)


def statuses(op, backward=None, untagged=False, traceable=False) -> dict:
    """Catalog scenario name -> status: with MLX's own VJP, every oracle's verdict; with
    `backward` planted, the verdict of the oracles that judge it."""
    return {s.name: _judge(s, backward, traceable, full=backward is None) for s in scenarios(op, untagged)}


_HONEST: dict = {}


def honest(op, traceable=False) -> dict:
    """Each catalog scenario's status with MLX's own VJP as a mutant of this kind is
    judged (once per op, process and kind): the baseline a mutant is compared with."""
    if (op, traceable) not in _HONEST:
        _HONEST[op, traceable] = {s.name: _judge(s, None, traceable) for s in scenarios(op)}
    return _HONEST[op, traceable]


def caught(op, backward, first_only=False, traceable=False) -> list:
    """Scenarios that pass with MLX's own VJP and do not pass with `backward` planted."""
    out = []
    for s in scenarios(op):
        if honest(op, traceable)[s.name] == "pass" and _judge(s, backward, traceable) != "pass":
            out.append(s.name)
            if first_only:
                break
    return out


def pinned(op) -> dict:
    """Each catalog scenario's full verdict with MLX's own VJP (every oracle of `run`),
    computed once per op and process: what a pinned-release test holds against the tags."""
    if (op, "full") not in _HONEST:
        _HONEST[op, "full"] = {s.name: _judge(s, None, full=True) for s in scenarios(op)}
    return _HONEST[op, "full"]


def honest_control(op) -> bool:
    """The mechanism itself: the float64 reference VJP planted the same way changes
    no verdict of an untagged scenario."""
    return all(_judge(s, lambda ctx: ctx.reference()) == honest(op)[s.name]
               for s in scenarios(op, untagged=True))


def registry_with(monkeypatch, *modules):
    """The registry with op modules not (yet) listed in ops.MODULES added through
    the plugin variable (never twice), reset for this test."""
    extra = [f"mlx_vjpcheck.ops.{m}" for m in modules if m not in ops.MODULES]
    if extra:
        monkeypatch.setenv(ops.PLUGINS_ENV, ",".join(extra))
    else:
        monkeypatch.delenv(ops.PLUGINS_ENV, raising=False)
    monkeypatch.setattr(ops, "_REGISTRY", {})
    return ops.registry()

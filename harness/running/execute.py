"""Run one scenario through MLX and judge it: the one path every context takes.

`measure(s, device, context)` computes the float64 expected values, runs the
MLX forward and VJP, then every oracle of the context (harness/oracles/)
on what it saw; `judging.judge` gives the verdict. `run` is the catalog's
form (a scenario that cannot be judged is an error record), the fuzzer's
engine the fuzz form (it is an invalid case). Generic over the op registry
and the oracle table: nothing here names an op or an oracle.

MLX is reached through the bridge (harness/oracles/bridge.py), which imports
it lazily, as every oracle's measuring function does.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from .. import oracles
from ..cases import expected
from ..core import checks, numeric, record
from ..judging import judge
from ..oracles import refusal
from ..oracles.base import Trial
from ..oracles.bridge import Call, error_text, mx as _mx, to_numpy  # noqa: F401  (execute.Call: the tests' name)


class Unjudgeable(Exception):
    """The call cannot be judged: the reference cannot decide, or MLX rejects the forward."""


def _observe_without_vjp(call, y) -> dict:
    """An op MLX gives no VJP: the forward, and whether asking for a VJP raises."""
    mx = _mx()
    yy = call(*call.primals)
    try:
        _, grads = mx.vjp(call, call.primals, [mx.ones(yy.shape, dtype=yy.dtype)])
        mx.eval(grads)
        raised = 0.0
    except Exception:
        raised = 1.0
    return {"forward": y, expected.NO_VJP: np.array(raised)}


def _observe(s, call, exp, cot, y) -> tuple:
    """(grads, observed) from MLX's VJP of the scenario's objective."""
    mx = _mx()
    if not s.info.has_vjp:
        return {}, _observe_without_vjp(call, y)
    obs = {"forward": y}
    if s.objective == "pair_loss":
        loss, grads = mx.value_and_grad(call.pair_loss, argnums=list(range(len(s.wrt))))(*call.primals)
        grads = grads if isinstance(grads, (list, tuple)) else (grads,)
        obs["loss"] = to_numpy(loss)
        first = lambda *a: mx.value_and_grad(call.pair_loss, argnums=0)(*a)[1]  # noqa: E731
        obs[f"hvp:{s.wrt[0]}"] = to_numpy(mx.grad(lambda *a: first(*a).sum(), argnums=0)(*call.primals))
        grads = {n: to_numpy(g) for n, g in zip(s.wrt, grads)}
    else:
        obs["forward"], grads = call.vjp(cot)
    obs.update({f"grad:{n}": g for n, g in grads.items()})
    return grads, obs


def measure(s, device: str, context: str = "run", seed: int = 0, on_stage=None) -> tuple:
    """One bound scenario on the current default device -> (record, expected): the
    checks of every oracle of `context`, MLX's error if its VJP raised, and the
    verdict; and the float64 expected values they were judged against.
    `on_stage(name, checks)` is told before each MLX stage, so a parent process
    can tell a crash in the VJP from one in the forward. Raises Unjudgeable."""
    t0 = time.perf_counter()
    stage = on_stage or (lambda name, done: None)
    if s.must_refuse:
        try:
            return _refusal(s, device, context, stage, t0), {}
        except AcceptedErrorInput:
            # This build takes the input (a patch widened the op): an ordinary call now,
            # whose VJP must work and be right; the record says so.
            rec, exp = measure(dataclasses.replace(s, must_refuse=False), device, context, seed, on_stage)
            return dict(rec, accepted_error_input=True), exp
    try:
        exp = expected.expected(s)
        acc = expected.accumulation(s, exp)
    except numeric.ReferenceUndecided as e:   # the reference cannot judge: say so, run nothing
        raise Unjudgeable(f"reference undecided: {e}"[:500]) from None
    except (ValueError, IndexError, TypeError, ZeroDivisionError) as e:
        # Inputs the float64 reference cannot take (a shape it does not model): no verdict,
        # and said so; never a dead worker read as an MLX crash.
        raise Unjudgeable(f"the float64 reference rejects the inputs: {error_text(e)}"[:500]) from None
    stage("forward", [])
    try:
        call = Call(s)
        y = call.forward()
    except Exception as e:   # MLX rejects the call itself: not a gradient defect
        raise Unjudgeable(f"forward raised {error_text(e)}") from None
    cot = expected.cotangent(s, exp["forward"])
    rec = record.of_scenario(s, device, context)
    fwd = checks.compare("forward", y, exp["forward"], *checks.tolerance(s.dtype), acc=acc.get("forward"))
    stage("vjp", [fwd])
    try:
        grads, obs = _observe(s, call, exp, cot, y)
    except Exception as e:   # an MLX exception in the VJP is a result, not a harness bug
        rec.update(error=error_text(e), checks=[fwd])
    else:
        stage("oracles", [fwd])
        trial = Trial(s, context, exp, cot, obs["forward"], grads, obs, seed, acc)
        rec["checks"] = _oracle_checks(trial, call)
        if trial.notes:
            rec["not_applicable"] = trial.notes
    return _finish(s, rec, t0), exp


class AcceptedErrorInput(Exception):
    """The forward took an input its op record lists as refused."""


def _refusal(s, device: str, context: str, stage, t0) -> dict:
    """An error input: the forward must refuse it (else AcceptedErrorInput: the caller
    judges it as an ordinary call), and the VJP must refuse it too, however it was built (a VJP that
    never evaluates the forward's kernel can return gradients for a call the
    forward refuses). A VJP that kills the process is the parent's crash record."""
    if not oracles.of_kind("refusal").runs_in(context):
        raise Unjudgeable(f"error inputs are not checked in the {context} context")
    rec = record.of_scenario(s, device, context)
    stage("forward", [])
    call = y = None
    try:
        call = Call(s)
        y = call(*call.primals)
        _mx().eval(y)
    except Exception as e:
        refused = error_text(e)
    else:
        raise AcceptedErrorInput(s.name)
    stage("vjp", [])
    rec["checks"] = [dict(refusal.vjp_refused(s, call, y), forward_error=refused)]
    return _finish(s, rec, t0)


def _oracle_checks(trial: Trial, call) -> list:
    """Every oracle of the trial's context, in table order."""
    return [c for row in oracles.in_context(trial.context) if row.measure is not None
            for c in row.measure(trial, call)]


def mark_determinism(rec: dict, again: dict) -> dict:
    """Say, per check, whether a second measurement gave the same verdict (and, where
    it failed, the same values), and whether an error came back the same: replay
    then compares what is deterministic and treats the rest as such."""
    second = {c["name"]: c for c in again.get("checks") or []}
    for c in rec["checks"]:
        o = second.get(c["name"])
        c["deterministic"] = o is not None and o["passed"] == c["passed"] and (
            c["passed"] or checks.same_values(o["observed"], c["observed"]))
    if rec.get("error") is not None:
        rec["error_deterministic"] = again.get("error") == rec["error"]
    return rec


def _finish(s, rec: dict, t0: float) -> dict:
    verdict = judge.judge(s, rec["checks"], rec["error"])
    rec["status"] = verdict.status
    rec["seconds"] = round(time.perf_counter() - t0, 6)
    return rec


def run(s, device: str, context: str = "run") -> dict:
    """The catalog's form: a scenario that cannot be judged is an error record. A
    record that does not pass is measured a second time, so that it says which of
    its values are deterministic (memory read past a buffer changes between runs)."""
    t0 = time.perf_counter()
    try:
        rec = measure(s, device, context)[0]
        if rec["status"] != "pass":
            mark_determinism(rec, measure(s, device, context)[0])
            rec["seconds"] = round(time.perf_counter() - t0, 6)
        return rec
    except Unjudgeable as e:
        rec = record.of_scenario(s, device, context, error=str(e))
        return _finish(s, rec, t0)

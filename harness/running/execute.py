"""Run one scenario through MLX and judge it: the one path every context takes.

`measure(s, device, context)` computes the float64 expected values, runs the
MLX forward and VJP, then every oracle of the context (judging/oracles.py)
on what it saw; `judging.judge` gives the verdict. `run` is the catalog's
form (a scenario that cannot be judged is an error record), the fuzzer's
engine the fuzz form (it is an invalid case). Generic over the op registry
and the oracle table: nothing here names an op or an oracle.

The only module of the running stage that imports mlx (lazily: `_mx()`),
besides the ops' calls and the oracles' measuring functions.

Complex calls (complex64 operands, complex128 references) follow MLX's
convention, which MLX does not document; on 0.32.4 it is (tests/running/
test_transforms.py holds it): the VJP of f at z with cotangent g is the real
gradient of L = Re sum(conj(g) * f(z)), packed as dL/dRe z + i dL/dIm z, the
conjugate-Wirtinger form PyTorch returns (2 dL/d conj(z)), not JAX's
conjugate of it. For a holomorphic f that is conj(f'(z)) * g; the gradient of
|z|^2 is 2 z. mx.jvp is the plain pushforward, f'(z) u.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from ..cases import expected
from ..core import checks, layout, numeric, opinfo
from ..judging import judge, oracles

MX_DTYPES = ("float32", "float16", "bfloat16", "float64", "complex64")
MX_COMPLEX = ("complex64",)


def _mx():
    import mlx.core as mx
    return mx


def host(values: np.ndarray, dtype: str) -> np.ndarray:
    """Values as handed to mx.array for `dtype`: float32 (MLX rounds on to half
    precision itself), float64 and complex64 as they are (core/tensors.py as_seen
    is the same path in numpy)."""
    if dtype == "float64":
        return np.asarray(values, dtype=np.float64)
    if dtype in MX_COMPLEX or np.iscomplexobj(values):
        return np.asarray(values, dtype=np.complex128).astype(np.complex64)
    return np.asarray(values, dtype=np.float64).astype(np.float32)


def to_mlx(t, dtype=None):
    """Evaluated storage first, then the views: MLX gets a real view onto it."""
    mx = _mx()
    dtype = dtype or t.dtype
    store = mx.array(host(layout.storage(t, np.float64), dtype), dtype=getattr(mx, dtype))
    mx.eval(store)
    for view in t.views:
        store = layout.apply_view(store, view, xp=mx)
    return store


def array(values, dtype: str):
    """A numpy array as an MLX array of `dtype`, the way operands are converted."""
    mx = _mx()
    return mx.array(host(values, dtype), dtype=getattr(mx, dtype))


def to_numpy(x) -> np.ndarray:
    mx = _mx()
    if x.dtype == mx.complex64:
        return np.array(x).astype(np.complex128)
    if x.dtype in (mx.bfloat16, mx.float16):
        x = x.astype(mx.float32)
    return np.array(x, dtype=np.float64)


def dtype_name(x) -> str:
    """An MLX array's dtype as the scenario schema names it ("float32", ...)."""
    return str(x.dtype).rsplit(".", 1)[-1]


def error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".replace("\n", " ")[:500]


class Call:
    """The scenario's MLX call as a function of its differentiated operands.
    Integer operands are handed over as int64 numpy arrays (the call converts
    them as MLX wants); floating ones as MLX arrays, views applied."""

    def __init__(self, s, params=None):
        self.s, self.info = s, s.info
        self.params = s.params if params is None else params
        self.fn = opinfo.resolve(self.info.mlx_call)
        ints = self.info.integer_operands
        self.operands = {n: (layout.logical(t, np.int64) if n in ints else to_mlx(t))
                         for n, t in s.operands.items()}
        self.primals = [self.operands[n] for n in s.wrt]

    def __call__(self, *diff):
        return self.fn(dict(self.operands, **dict(zip(self.s.wrt, diff))), self.params)

    def pair_loss(self, *diff):
        y = self(*diff)
        y = y.reshape((-1,) + tuple(y.shape[-2:]))
        return 0.5 * ((y[0] - y[1]) ** 2).sum()

    def cotangent(self, cot: np.ndarray):
        """The cotangent as MLX takes it: in the call's dtype, complex where the
        output is (a real output of a complex call takes a float32 cotangent)."""
        dtype = self.s.dtype
        if np.iscomplexobj(cot) and dtype not in MX_COMPLEX:
            dtype = "complex64"
        elif not np.iscomplexobj(cot) and dtype in MX_COMPLEX:
            dtype = "float32"
        return array(cot, dtype)

    def vjp(self, cot: np.ndarray):
        """(forward, {operand: gradient}) as float64 (complex128) numpy."""
        mx = _mx()
        (y,), grads = mx.vjp(self, self.primals, [self.cotangent(cot)])
        mx.eval(y, *grads)
        return to_numpy(y), {n: to_numpy(g) for n, g in zip(self.s.wrt, grads)}

    def forward(self) -> np.ndarray:
        y = self(*self.primals)
        _mx().eval(y)
        return to_numpy(y)


@dataclass(frozen=True)
class Trial:
    """What every oracle may look at: the scenario, the reference's expected
    values, the cotangent, and what MLX gave (forward, gradients, and every
    observed value by its check name: forward, grad:*, loss, hvp:*, no_vjp);
    the half-precision accumulation records by check name (cases/expected.py).
    An oracle that does not apply to the call says why in `notes` (the
    record's `not_applicable`); `memo` holds values two oracles share."""
    s: object
    context: str
    expected: dict
    cotangent: np.ndarray
    forward: np.ndarray
    grads: dict
    observed: dict
    seed: int = 0
    acc: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    memo: dict = field(default_factory=dict)

    def note(self, oracle: str, reason: str) -> list:
        """Record that `oracle` does not apply here, and why; no checks."""
        self.notes.append({"oracle": oracle, "reason": str(reason)[:300]})
        return []


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
    rec = {"scenario": s.name, "device": device, "context": context, "checks": [], "error": None,
           "expects_defect": s.expects_defect, "defect_tags": list(s.defect_tags)}
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
    rec = {"scenario": s.name, "device": device, "context": context, "checks": [], "error": None,
           "expects_defect": s.expects_defect, "defect_tags": list(s.defect_tags)}
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
    rec["checks"] = [dict(_vjp_refusal(s, call, y), forward_error=refused)]
    return _finish(s, rec, t0)


def _vjp_refusal(s, call, y) -> dict:
    """refusal:vjp: observed 1 when the VJP raised (or could not be built), against 1."""
    mx = _mx()
    try:
        if call is None:
            raise ValueError("the call cannot be built")
        cot = call.cotangent(layout.logical(s.cotangent)) if s.cotangent is not None else \
            mx.ones(y.shape if y is not None else (), dtype=y.dtype if y is not None else getattr(mx, s.dtype))
        _, grads = mx.vjp(call, call.primals, [cot])
        mx.eval(grads)
    except Exception:
        return checks.compare("refusal:vjp", np.array(1.0), np.array(1.0), 0.0, 0.0, kind="refusal")
    return checks.compare("refusal:vjp", np.array(0.0), np.array(1.0), 0.0, 0.0, kind="refusal")


def _oracle_checks(trial: Trial, call) -> list:
    """Every oracle of the trial's context, in table order."""
    return [c for row in oracles.in_context(trial.context) if row.measure is not None
            for c in opinfo.resolve(row.measure)(trial, call)]


def same_values(a, b) -> bool:
    """Recorded values equal, NaN equal to NaN (what replay may compare exactly)."""
    a, b = checks.shaped(a, None), checks.shaped(b, None)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def mark_determinism(rec: dict, again: dict) -> dict:
    """Say, per check, whether a second measurement gave the same verdict (and, where
    it failed, the same values), and whether an error came back the same: replay
    then compares what is deterministic and treats the rest as such."""
    second = {c["name"]: c for c in again.get("checks") or []}
    for c in rec["checks"]:
        o = second.get(c["name"])
        c["deterministic"] = o is not None and o["passed"] == c["passed"] and (
            c["passed"] or same_values(o["observed"], c["observed"]))
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
        rec = {"scenario": s.name, "device": device, "context": context, "checks": [], "error": str(e),
               "expects_defect": s.expects_defect, "defect_tags": list(s.defect_tags)}
        return _finish(s, rec, t0)

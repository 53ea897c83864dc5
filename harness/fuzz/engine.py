"""One fuzz case: the scenario through MLX and every fuzz oracle
(running.execute.measure in the "fuzz" context), judged by judging.judge.

A case is `invalid` when it cannot be judged: MLX rejects the forward call
(an unsupported dtype on this device, say) or the float64 reference cannot
decide. That is not a gradient defect. Otherwise the record has the
results-schema shape, and failures carry a signature.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..cases import expected
from ..core import draw, jsonio, numeric, record, verdict
from .. import oracles
from ..judging import judge
from ..oracles import bridge
from ..running import execute


@dataclass
class Outcome:
    scenario: object
    status: str                      # "pass", "fail" or "invalid"
    record: dict | None = None
    failures: list = field(default_factory=list)
    reason: str = ""
    oracles: list = field(default_factory=list)   # the oracles that judged it (made checks)
    expected: dict | None = None    # the float64 values it was judged against (kept when it failed)

    @property
    def confirmed(self) -> bool:
        """Only a confirming oracle (the float64 reference, a VJP that raised) makes a finding."""
        return judge.Judgement(self.status, tuple(self.failures)).confirmed

    @property
    def primary(self) -> dict | None:
        return self.failures[0] if self.failures else None

    @property
    def signature(self) -> str | None:
        return judge.signature(self.scenario, self.primary) if self.confirmed else None


def run_case(s, device: str, fd_seed: int = 0, on_stage=None) -> Outcome:
    try:
        rec, exp = execute.measure(s, device, "fuzz", fd_seed, on_stage)
    except execute.Unjudgeable as e:
        return Outcome(s, "invalid", reason=str(e))
    failures = list(judge.judge(s, rec["checks"], rec["error"]).failures)
    return Outcome(s, "fail" if failures else "pass", rec, failures, expected=jsonable(exp))


def probe(s, device: str, on_stage=None) -> Outcome:
    """Whether a call can be judged at all, without the oracles: the float64
    reference takes it and MLX runs its forward ("pass"), or not ("invalid"). The
    campaign's dtype probe; an error input (which must be refused) is run whole."""
    if s.must_refuse:
        return run_case(s, device, 0, on_stage)
    try:
        expected.expected(s)
    except (numeric.ReferenceUndecided, ValueError, IndexError, TypeError, ZeroDivisionError) as e:
        return Outcome(s, "invalid", reason=f"the float64 reference rejects the inputs: {e}"[:500])
    (on_stage or (lambda name, done: None))("forward", [])
    try:
        bridge.Call(s).forward()
    except Exception as e:   # MLX rejects the call itself
        return Outcome(s, "invalid", reason=f"forward raised {bridge.error_text(e)}")
    return Outcome(s, "pass")


HALF = ("float16", "bfloat16")


def float32_twin(s):
    """The same call with its half-precision tensors in float32, bound to its op
    (None when it has none). A half-precision tolerance can be too wide for the
    float64 reference to confirm a defect another oracle saw; in float32 the
    reference's bound is tight, so the twin can confirm it, as its own case."""
    def f32(t):
        return dataclasses.replace(t, dtype="float32") if t is not None and t.dtype in HALF else t
    if not any(t.dtype in HALF for t in [*s.operands.values(), s.cotangent] if t is not None):
        return None
    twin = dataclasses.replace(s, operands={n: f32(t) for n, t in s.operands.items()}, cotangent=f32(s.cotangent))
    return draw.finish(twin).bound(s.info)


def crashed(s, device: str, stage: str, done: list, how: str, detail: str) -> Outcome:
    """The worker process died while running a case. In the forward that is not a
    gradient defect (invalid); in the VJP or the oracles' further VJPs it is."""
    if stage == "forward":
        return Outcome(s, "invalid", reason=f"process died in the forward ({how})")
    rec = record.of_scenario(s, device, "fuzz", checks=done,
                             error=f"process died during the {stage} stage ({how})" + (f": {detail}" if detail else ""),
                             seconds=None, status=verdict.status(done, crashed=True))
    verdict_ = judge.judge(s, rec["checks"], rec["error"], crashed=True)
    return Outcome(s, "fail", rec, list(verdict_.failures))


def jsonable(exp: dict) -> dict:
    return {k: np.asarray(v).tolist() for k, v in exp.items()}


def to_json(o: Outcome, compact: bool = False) -> dict:
    """compact: leave out the record (a passing case's values are never written)."""
    return {"status": o.status, "record": None if compact else o.record, "failures": o.failures,
            "reason": o.reason, "oracles": oracles.judged_by(o.record),
            # complex values as [re, im] pairs, the files' form (a reproducer recomputes them)
            "expected": None if compact or o.expected is None else jsonio.complex_pairs(o.expected)}


def from_json(s, d: dict) -> Outcome:
    return Outcome(s, d["status"], d["record"], d["failures"], d["reason"], d.get("oracles") or [],
                   d.get("expected"))

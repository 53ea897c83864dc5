"""One fuzz case: run the scenario through MLX and every oracle, then classify.

A case is `invalid` when MLX rejects the forward call (an unsupported dtype on
this device, say): that is not a gradient defect. Otherwise the record has the
results-schema shape of harness.execute, and failures carry a signature.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from .. import ops
from ..cases import expected
from ..core import checks, numeric, verdict
from . import oracles


@dataclass
class Outcome:
    scenario: object
    status: str                      # "pass", "fail" or "invalid"
    record: dict | None = None
    failures: list = field(default_factory=list)
    reason: str = ""
    oracles: list = field(default_factory=list)   # the oracles that judged it (made checks)

    @property
    def confirmed(self) -> bool:
        """Only the float64 reference (or a VJP that raised) makes a finding."""
        return any(f["oracle"] in oracles.CONFIRMING for f in self.failures)

    @property
    def primary(self) -> dict | None:
        return self.failures[0] if self.failures else None

    @property
    def signature(self) -> str | None:
        if not self.confirmed:
            return None
        return signature(self.scenario, self.primary)


def signature(s, failure: dict) -> str:
    """op, which gradient, which oracle, kind of error, and the call form.

    Wrong values keep the call form (which index array, sorted flag in effect,
    left broadcasting): that is what separates the report's defect classes.
    An exception is named by its type and MLX's '[function]' tag alone, since
    the same failing site shows up under many forms."""
    form = "any" if failure["oracle"] == "vjp_exception" else (s.family or "plain")
    parts = (s.op, failure["gradient"], failure["oracle"], failure["kind"], form)
    return "__".join(re.sub(r"[^A-Za-z0-9_.+-]", "-", p) for p in parts)


def error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".replace("\n", " ")[:500]


def exception_kind(e: BaseException) -> str:
    """Exception type plus the '[function]' tag MLX puts first in its messages."""
    tag = re.match(r"\s*\[([^\]]+)\]", str(e))
    return f"exception-{type(e).__name__}" + (f"-{tag.group(1)}" if tag else "")


def _error_kind(check: dict) -> str:
    if check["kind"] == "exact_zero":
        return "unselected-nonzero"
    if check["observed_shape"] != check["expected_shape"]:
        return "shape"
    # Non-finite values count as wrong values: garbage read from outside an
    # operand is sometimes NaN and sometimes not, and must not split a class.
    return "wrong-value"


def _gradient(check: dict, s) -> str:
    name = check["name"]
    if name == "forward":
        return "forward"
    if name.startswith(("fd:", "jvp:")) or name == "twice:vjp":
        return "+".join(s.wrt)
    return "grad-" + name.split(":", 1)[1].split("#")[0]


def classify(s, rec: dict, vjp_error: BaseException | None) -> list:
    """Failures in oracle priority order (oracles.ORACLES), then check order."""
    out = []
    if vjp_error is not None:
        out.append({"oracle": "vjp_exception", "gradient": "vjp", "kind": exception_kind(vjp_error),
                    "check": None})
    for c in rec["checks"]:
        if not c["passed"]:
            out.append({"oracle": oracles.KIND_TO_ORACLE[c["kind"]], "gradient": _gradient(c, s),
                        "kind": _error_kind(c), "check": c["name"]})
    # A forward that disagrees with the reference comes first: a VJP error is
    # then a consequence (its cotangent has the reference's output shape).
    rank = {o: i for i, o in enumerate(oracles.NAMES)}
    return sorted(out, key=lambda f: (f["check"] != "forward", rank[f["oracle"]]))


def run_case(s, device: str, fd_seed: int = 0, on_stage=None) -> Outcome:
    """`on_stage(name, checks)` is told before each MLX stage, so a parent process
    can tell a crash in the VJP from one in the forward."""
    t0 = time.perf_counter()
    stage = on_stage or (lambda name, done: None)
    try:
        exp = expected.expected(s)
    except numeric.ReferenceUndecided as e:   # no verdict without a reference that can judge
        return Outcome(s, "invalid", reason=f"reference undecided: {e}")
    stage("forward", [])
    try:
        y_fwd = oracles.forward(s)
    except Exception as e:   # MLX rejects the call itself: not a gradient defect
        return Outcome(s, "invalid", reason=f"forward raised {error_text(e)}")
    cot = expected.cotangent(s, exp["forward"])
    rec = {"scenario": s.name, "device": device, "checks": [], "error": None, "fd": {},
           "expects_defect": s.expects_defect, "defect_tags": list(s.defect_tags)}
    vjp_error = None
    fwd_check = checks.compare("forward", y_fwd, exp["forward"], *checks.tolerance(ops.dtype_of(s)))
    stage("vjp", [fwd_check])
    try:
        y, grads = oracles.run_vjp(s, cot)
    except Exception as e:
        vjp_error = e
        rec["error"] = error_text(e)
        rec["checks"] = [fwd_check]
    else:
        stage("oracles", [fwd_check])
        rec["checks"] = oracles.run_all(oracles.Case(s, exp, cot, y, grads, fd_seed))
    rec["status"] = verdict.status(rec["checks"], rec["error"])
    rec["seconds"] = round(time.perf_counter() - t0, 6)
    failures = classify(s, rec, vjp_error)
    return Outcome(s, "fail" if failures else "pass", rec, failures)


def crashed(s, device: str, stage: str, done: list, how: str, detail: str) -> Outcome:
    """The worker process died while running a case. In the forward that is not a
    gradient defect (invalid); in the VJP or the oracles' further VJPs it is."""
    if stage == "forward":
        return Outcome(s, "invalid", reason=f"process died in the forward ({how})")
    rec = {"scenario": s.name, "device": device, "checks": list(done),
           "error": f"process died during the {stage} stage ({how})" + (f": {detail}" if detail else ""),
           "fd": {}, "expects_defect": s.expects_defect, "defect_tags": list(s.defect_tags),
           "seconds": None, "status": verdict.status(done, crashed=True)}
    where = "" if stage == "vjp" else f"-in-{stage}"
    failures = [{"oracle": "vjp_exception", "gradient": "vjp", "kind": f"crash-{how.replace(' ', '-')}{where}",
                 "check": None}]
    failures += classify(s, rec, None)
    return Outcome(s, "fail", rec, failures)


def judged_by(record: dict | None) -> list:
    """The oracles whose checks are in a record (vjp_exception when the VJP raised)."""
    if not record:
        return []
    names = {oracles.KIND_TO_ORACLE.get(c.get("kind"), "reference") for c in record.get("checks") or []}
    if record.get("error"):
        names.add("vjp_exception")
    return [o for o in oracles.NAMES if o in names]


def to_json(o: Outcome, compact: bool = False) -> dict:
    """compact: leave out the record (a passing case's values are never written)."""
    return {"status": o.status, "record": None if compact else o.record, "failures": o.failures,
            "reason": o.reason, "oracles": judged_by(o.record)}


def from_json(s, d: dict) -> Outcome:
    return Outcome(s, d["status"], d["record"], d["failures"], d["reason"], d.get("oracles") or [])

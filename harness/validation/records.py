"""Recompute a results record from its recorded inputs and re-derive its verdict.

Generic over ops and over who wrote the record (Python runner, native suite,
fuzzer): given a scenario dict and a record, the float64 references give the
expected values, the tolerance table gives the rule, and verdict.status gives
the status. Nothing recorded is trusted except the observed MLX values.
"""
from __future__ import annotations

import json
import math

import numpy as np

from .. import ops
from ..cases import expected
from ..core import checks, verdict
from ..core.scenario import Scenario
from ..evidence import results

AGREE = 1e-12   # recorded vs recomputed float64 expected values: same maths, same numbers


DTYPES = ("float32", "float16", "bfloat16", "float64", "uint32", "int32", "int64", "uint8")


def _scenario_problems(d: dict) -> list:
    """Fields the references ignore still have to be what a writer could have written."""
    tensors = list((d.get("operands") or {}).values()) + [d.get(k) for k in ("lhs_indices", "rhs_indices",
                                                                             "cotangent")]
    out = [f"tensor dtype {t.get('dtype')!r} unknown" for t in tensors
           if isinstance(t, dict) and t.get("dtype") not in DTYPES]
    step = d.get("fd_step")
    if step is not None and (not isinstance(step, (int, float)) or isinstance(step, bool) or not step > 0):
        out.append(f"fd_step {step!r} is not a positive number")
    if not isinstance(d.get("sorted_indices"), bool) or d.get("objective") not in ("vjp", "pair_loss"):
        out.append("sorted_indices or objective malformed")
    if not all(isinstance(d.get(k), str) for k in ("name", "op", "family", "description")):
        out.append("name, op, family or description is not text")
    return out


class Recomputer:
    """Expected values per distinct scenario, computed once per validation run
    (records on several devices, or pristine and patched, share a scenario)."""

    def __init__(self):
        self._cache = {}

    def get(self, scen_dict: dict) -> tuple:
        key = json.dumps(scen_dict, sort_keys=True)
        if key not in self._cache:
            problems = _scenario_problems(scen_dict)
            if problems:
                raise ValueError("; ".join(problems))
            s = Scenario.from_dict(scen_dict)
            # Junk a lenient reader would coerce ("x" for a flag, true for 1.0) is refused.
            if json.dumps(s.to_dict(), sort_keys=True) != key:
                raise ValueError("scenario is not in the form Scenario.to_dict writes")
            self._cache[key] = (s, expected.expected(s))
        return self._cache[key]


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _same(a, b) -> bool:
    a, b = _arr(a), _arr(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def agree(recorded, recomputed) -> bool:
    """Same shape, and equal to AGREE elementwise; a non-finite value must be
    recorded as exactly that value (NaN for NaN)."""
    a, b = _arr(recorded), _arr(recomputed)
    if a.shape != b.shape:
        return False
    finite = np.isfinite(b)
    same_nonfinite = (np.isnan(a) & np.isnan(b)) | (a == b)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(a - np.where(finite, b, 0.0)) <= AGREE * (1.0 + np.abs(np.where(finite, b, 0.0)))
    return bool(np.all(np.where(finite, near & np.isfinite(a), same_nonfinite)))


def _close(a, b) -> bool:
    """Recorded scalar a against recomputed b: NaN equals NaN, inf equals inf."""
    if a is None or b is None:
        return a is b
    if not isinstance(a, (int, float)) or isinstance(a, bool):
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= 1e-9 * (1 + abs(b))


def _worst_problems(c: dict, new: dict) -> list:
    """The recorded worst element is one the rule ranks worst (ties may pick another)."""
    idx, want = c.get("worst_index"), new["worst_index"]
    if idx != want and want is not None and new["worst_error"] is not None:
        try:   # a tie: same error and tolerance at the recorded index
            err, tol = checks.errors(checks.shaped(new["observed"], new["observed_shape"]),
                                     checks.shaped(new["expected"], new["expected_shape"]), c["atol"], c["rtol"])
            k = tuple(int(i) for i in idx)
            if len(k) == err.ndim and _close(float(err[k]), new["worst_error"]) \
                    and _close(float(tol[k]), new["worst_tolerance"]):
                want = idx
        except (TypeError, ValueError, IndexError, KeyError):
            pass
    if idx != want or not _close(c.get("worst_error"), new["worst_error"]) \
            or not _close(c.get("worst_tolerance"), new["worst_tolerance"]):
        return [f"recorded worst element {idx} (error {c.get('worst_error')!r}) but recomputation gives "
                f"{new['worst_index']} (error {new['worst_error']!r})"]
    return []


def _verdict_matches(c: dict, new: dict) -> list:
    out = []
    if bool(c.get("passed")) != new["passed"] or c.get("passed") not in (True, False):
        out.append(f"recorded passed={c.get('passed')!r} but recomputation gives {new['passed']}")
    elif c.get("reason") != new["reason"]:
        out.append(f"recorded reason {c.get('reason')!r} but recomputation gives {new['reason']!r}")
    if c.get("observed_shape") != new["observed_shape"] or c.get("expected_shape") != new["expected_shape"]:
        out.append("recorded shapes do not match the values")
    return out + _worst_problems(c, new)


def _tolerance_problems(c: dict, want: tuple) -> list:
    got = (c.get("atol"), c.get("rtol"))
    if got != tuple(want):
        return [f"tolerance (atol, rtol)={got} differs from the table's {tuple(want)}"]
    return []


def _reference_check(c, exp, tol) -> tuple:
    name = c["name"]
    reasons = [] if c.get("kind", "reference") == "reference" else [f"kind {c.get('kind')!r} is not 'reference'"]
    reasons += _tolerance_problems(c, tol)
    if not agree(checks.shaped(c.get("expected"), c.get("expected_shape")), exp[name]):
        reasons.append("recorded expected values differ from the recomputed float64 reference")
    new = checks.compare(name, checks.shaped(c.get("observed"), c.get("observed_shape")), exp[name], *tol)
    return reasons + _verdict_matches(c, new), new


def _fd_check(c, rec, by_name, exp, tol, forward_ok) -> tuple:
    name = c["name"]
    operand = name.split(":", 1)[1]
    reasons = [] if c.get("kind") == "fd" else [f"kind {c.get('kind')!r} is not 'fd'"]
    reasons += _tolerance_problems(c, tol)
    grad = by_name.get(f"grad:{operand}")
    if grad is None or not _same(c.get("observed"), grad.get("observed")):
        reasons.append(f"observed values are not the recorded grad:{operand} values")
    fd = (rec.get("fd") or {}).get(name)
    if fd is None or not _same(c.get("expected"), fd):
        reasons.append("expected values are not the recorded finite differences")
        fd = c.get("expected")
    new = checks.compare(name, checks.shaped(c.get("observed"), c.get("observed_shape")),
                         checks.shaped(fd, c.get("expected_shape")), *tol, kind="fd")
    # Central differences of the actual forward follow the maths whenever that
    # forward is right, so they must land on the reference gradient.
    if forward_ok and not checks.compare(name, fd, exp[f"grad:{operand}"], *tol)["passed"]:
        reasons.append("recorded finite differences disagree with the reference gradient "
                       "although the forward agrees with the reference")
    return reasons + _verdict_matches(c, new), new


def _other_check(c) -> tuple:
    """A check this validator has no reference for (a fuzz oracle): self-consistency only."""
    try:
        new = checks.recheck(c)
    except (KeyError, TypeError, ValueError) as e:
        return [f"cannot recheck ({type(e).__name__}: {e})"], c
    if "passed" not in new:
        return ["no recorded values to recheck"], c
    return _verdict_matches(c, new), new


def _forward_ok(by_name: dict, exp: dict, tol: tuple) -> bool:
    """Whether MLX's recorded forward agrees with the recomputed reference."""
    if "forward" not in by_name:
        return False
    try:
        return checks.compare("forward", by_name["forward"].get("observed"), exp["forward"], *tol)["passed"]
    except (TypeError, ValueError):
        return False


def _classify(name: str, s, exp: dict) -> str:
    if name in exp:
        return "reference"
    if name.startswith("fd:") and name[3:] in s.wrt:
        return "fd"
    return "other"


def _names_problems(s, exp, rec, names: list, strict: bool) -> list:
    out = [f"check {n!r} appears twice" for n in sorted({n for n in names if names.count(n) > 1})]
    if rec.get("error") is not None or rec.get("status") == "crashed":
        return out
    fd_names = {n for n in names if _classify(n, s, exp) == "fd"}
    if (strict or "fd" in rec) and fd_names != set(rec.get("fd") or {}):
        out.append("finite-difference checks do not match the recorded finite differences")
    if not strict:   # a fuzz record may check a subset, and oracles of its own
        return out
    missing = sorted(set(exp) - set(names))
    if missing:
        out.append(f"checks missing for {missing}")
    extra = sorted(n for n in names if _classify(n, s, exp) == "other")
    if extra:
        out.append(f"unexpected checks {extra}")
    return out


def _status_problems(s, rec, rechecked: list) -> list:
    out, status, error = [], rec.get("status"), rec.get("error")
    if status not in verdict.STATUSES:
        return [f"unknown status {status!r}"]
    # Checks recorded before an error or crash (a forward that worked) are facts
    # like any other and are rechecked above; the status must still say error.
    if status in ("crashed", "error") and (not isinstance(error, str) or not error):
        out.append(f"status {status} without an error message")
    secs = rec.get("seconds")
    if secs is not None and (not isinstance(secs, (int, float)) or isinstance(secs, bool) or not secs >= 0):
        out.append(f"seconds {secs!r} is not a duration")
    derived = verdict.status(rechecked, error, crashed=(status == "crashed"))
    if derived != status:
        out.append(f"recorded status {status!r} but the checks give {derived!r}")
    if "expects_defect" in rec and rec["expects_defect"] != s.expects_defect:
        out.append("expects_defect does not follow from the scenario")
    if "defect_tags" in rec and list(rec["defect_tags"]) != list(s.defect_tags):
        out.append("defect_tags differ from the scenario's")
    return out


def check_record(group, where: str, scen_dict: dict, rec: dict, rc: Recomputer, strict=True) -> None:
    """Add one item per recorded check plus one for the record's status to `group`."""
    with np.errstate(all="ignore"):   # forged values may overflow; the check fails, quietly
        _check_record(group, where, scen_dict, rec, rc, strict)


def _check_record(group, where, scen_dict, rec, rc, strict) -> None:
    try:
        s, exp = rc.get(scen_dict)
        ref_tol, fd_tol = checks.tolerance(ops.dtype_of(s)), checks.tolerance(ops.dtype_of(s), "fd")
    except Exception as e:   # any malformed scenario is a failed check, not a crash
        group.fail(f"{where}: scenario cannot be recomputed ({type(e).__name__}: {e})")
        return
    recorded = rec.get("checks")
    if not isinstance(recorded, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                                 for c in recorded):
        group.fail(f"{where}: checks is not a list of named checks")
        return
    by_name = {c["name"]: c for c in recorded}
    forward_ok = _forward_ok(by_name, exp, ref_tol)
    rechecked = []
    for c in recorded:
        try:
            kind = _classify(c["name"], s, exp)
            if kind == "reference":
                reasons, new = _reference_check(c, exp, ref_tol)
            elif kind == "fd":
                reasons, new = _fd_check(c, rec, by_name, exp, fd_tol, forward_ok)
            else:
                reasons, new = _other_check(c)
        except Exception as e:   # hostile JSON: a malformed value is a failed check, not a crash
            reasons, new = [f"malformed check ({type(e).__name__}: {e})"], dict(c, passed=False)
        group.item(reasons, f"{where}: {c['name']}")
        rechecked.append(new)
    names = [c["name"] for c in recorded]
    try:
        problems = _names_problems(s, exp, rec, names, strict)
        if strict or "status" in rec:
            problems += _status_problems(s, rec, rechecked)
    except Exception as e:
        problems = [f"malformed record ({type(e).__name__}: {e})"]
    group.item(problems, f"{where}: status")


def _header_problems(data: dict) -> list:
    out = []
    if data.get("schema") != results.SCHEMA:
        out.append(f"schema {data.get('schema')!r} is not {results.SCHEMA!r}")
    if data.get("tolerance_rule") != results.TOLERANCE_RULE:
        out.append("tolerance_rule differs from the rule this validator applies")
    table = json.loads(json.dumps({"reference": checks.TOLERANCE, "fd": checks.FD_TOLERANCE}))
    if data.get("tolerances") != table:
        out.append("tolerances differ from the tolerance table")
    scen = data.get("scenarios")
    if not isinstance(scen, dict) or any(not isinstance(d, dict) or d.get("name") != k
                                         for k, d in scen.items()):
        out.append("scenarios is not a map from name to scenario")
    if not isinstance(data.get("records"), list):
        out.append("records is not a list")
    return out


def check_results(group, name: str, data, rc: Recomputer) -> None:
    """A whole results file: header, every record, the summary counts."""
    if not isinstance(data, dict):
        group.fail(f"{name}: not a JSON object")
        return
    header = _header_problems(data)
    group.item(header, f"{name}: header")
    if header:
        return
    scenarios, recs, seen = data["scenarios"], data["records"], set()
    for rec in recs:
        if not isinstance(rec, dict):
            group.fail(f"{name}: a record is not an object")
            continue
        key = (rec.get("scenario"), rec.get("device"))
        where = f"{name}: {key[0]} on {key[1]}"
        if not all(isinstance(k, str) for k in key) or key in seen or key[0] not in scenarios:
            group.fail(f"{where}: duplicate record or unknown scenario")
            continue
        seen.add(key)
        check_record(group, where, scenarios[key[0]], rec, rc)
    try:
        want = results.summary([r for r in recs if isinstance(r, dict)])
    except Exception as e:
        want = f"uncomputable ({e})"
    group.check(data.get("summary") == want,
                f"{name}: summary {data.get('summary')} does not match the records ({want})")

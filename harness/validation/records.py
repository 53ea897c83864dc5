"""Recompute a results record from its recorded inputs and re-derive its verdict.

Generic over ops and over who wrote the record (Python runner, native suite,
fuzzer): given a scenario dict and a record, the float64 references give the
expected values, the tolerance table gives the rule, and verdict.status gives
the status. Nothing recorded is trusted except the observed MLX values.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np

from ..cases import bind, expected
from ..core import checks, verdict
from ..core.scenario import OBJECTIVES, Scenario
from ..evidence import results
from .. import oracles
from ..judging import judge
from ..oracles import recheck
from . import catalog_table, parallel
from .groups import Group

# What a tensor of a scenario can be: MLX's floating and complex dtypes, and the integer
# and boolean ones index arrays, codes and masks use.
DTYPES = ("float32", "float16", "bfloat16", "float64", "complex64", "uint8", "uint16", "uint32", "uint64",
          "int8", "int16", "int32", "int64", "bool")
agree = recheck.agree   # recorded vs recomputed float64 values (used by the fuzz and native checks)


def _scenario_problems(d: dict) -> list:
    """Fields the references ignore still have to be what a writer could have written."""
    tensors = list((d.get("operands") or {}).values()) + [d.get("cotangent")]
    out = [f"tensor dtype {t.get('dtype')!r} unknown" for t in tensors
           if isinstance(t, dict) and t.get("dtype") not in DTYPES]
    step = d.get("fd_step")
    if step is not None and (not isinstance(step, (int, float)) or isinstance(step, bool) or not step > 0):
        out.append(f"fd_step {step!r} is not a positive number")
    if d.get("objective") not in OBJECTIVES or not isinstance(d.get("params"), dict):
        out.append("params or objective malformed")
    if not all(isinstance(d.get(k), str) for k in ("name", "op", "family", "description")):
        out.append("name, op, family or description is not text")
    return out


class Recomputer:
    """Expected values per distinct scenario, computed once per validation run
    (records on several devices, or pristine and patched, share a scenario). A
    scenario that is, byte for byte, one of this package's catalog scenarios takes
    its expected values from the catalog table (catalog_table.py: computed by the
    same references, kept by code version); any other is computed here."""

    def __init__(self, table=None):
        self._cache, self.table, self._texts = {}, table, {}
        self._told = {}   # id -> (dict, sha256): identities the other processes made (learn)

    def identity(self, scen_dict: dict) -> tuple:
        """(canonical text, its sha256) of a parsed scenario, once per dict object: the
        records and the binding both ask (the entry holds the dict, so its id stays its own).
        The text is None where the table knew the hash by the scenario's form (a catalog
        scenario as results files hold it): text() writes it when it is wanted."""
        hit = self._texts.get(id(scen_dict))
        if hit is None or hit[0] is not scen_dict:
            known = self.table.known(scen_dict) if self.table is not None else None
            if known is not None:
                hit = (scen_dict, None, known)
            else:
                text = catalog_table.canonical(scen_dict)
                hit = (scen_dict, text, catalog_table.text_hash(text))
            self._texts[id(scen_dict)] = hit
        return hit[1], hit[2]

    def text(self, scen_dict: dict) -> str:
        """The canonical text of a parsed scenario."""
        text = self.identity(scen_dict)[0]
        return text if text is not None else catalog_table.canonical(scen_dict)

    def digest(self, scen_dict: dict) -> str:
        """The sha256 of identity(scen_dict), taken from what another process made when it
        told (learn), else made here."""
        told = self._told.get(id(scen_dict))
        if told is not None and told[0] is scen_dict:
            return told[1]
        return self.identity(scen_dict)[1]

    def made(self) -> dict:
        """{id of a scenario dict: sha256}: what identity made in this process (a forked
        copy tells its parent; the ids are the parent's too, the memory being its copy)."""
        return {k: hit[2] for k, hit in self._texts.items()}

    def learn(self, told: dict, scenarios) -> None:
        """Take another process's made() for the dicts among `scenarios` (by id; any
        other id is ignored)."""
        mine = {id(d): d for d in scenarios}
        for k, digest in told.items():
            if k in mine and isinstance(digest, str):
                self._told[k] = (mine[k], digest)

    def get(self, scen_dict: dict) -> tuple:
        _, digest = self.identity(scen_dict)
        key = digest   # the cache is keyed by the text's hash: equal texts, one entry
        if key not in self._cache:
            problems = _scenario_problems(scen_dict)
            if problems:
                raise ValueError("; ".join(problems))
            s = bind(Scenario.from_dict(scen_dict))
            # Junk a lenient reader would coerce ("x" for a flag, true for 1.0) is refused. A
            # catalog scenario's own text is that form (catalog_table checks it when it builds).
            catalog = self.table is not None and self.table.is_catalog(digest)
            if not catalog and catalog_table.canonical(s.to_dict()) != self.text(scen_dict):
                raise ValueError("scenario is not in the form Scenario.to_dict writes")
            known = self.table.values(digest) if self.table else None
            prefill = self.table.prefill(digest) if self.table and known is not None else {}
            self._cache[key] = (s, known if known is not None else expected.expected(s), prefill)
        return self._cache[key]


def _forward_ok(by_name: dict, exp: dict, tol: tuple) -> bool:
    """Whether MLX's recorded forward agrees with the recomputed reference."""
    if "forward" not in by_name:
        return False
    try:
        return recheck.passes(by_name["forward"].get("observed"), exp["forward"], *tol)
    except (TypeError, ValueError):
        return False


def _recheck(c: dict, ctx) -> tuple:
    """The check re-derived by the rule its oracle's row names."""
    row = oracles.of_kind(c.get("kind"))
    if row is None or row.recheck is None:
        return [f"kind {c.get('kind')!r} is no oracle the validator re-checks"], dict(c, passed=False)
    base, sep, n = c["name"].partition("#")
    if c.get("kind") == "reference" and sep and n.isdigit() and base in ctx.expected:
        # a repeat measurement of a reference value (backward twice's grad:x#2): the same rule
        got = row.recheck(dict(c, name=base), ctx)
        if isinstance(got, recheck.Pending):
            return _Renamed(got, c["name"])
        reasons, new = got
        return reasons, dict(new, name=c["name"])
    return row.recheck(c, ctx)


class _Renamed:
    """A repeat measurement's Pending: its result under the repeat's own name."""

    def __init__(self, pending, name: str):
        self.pending, self.name = pending, name

    def result(self) -> tuple:
        reasons, new = self.pending.result()
        return reasons, dict(new, name=self.name)


def _names_problems(s, exp, rec, names: list, strict: bool) -> list:
    """A run record checks every value the reference has, by the oracles of its
    context and nothing else; a fuzz record checks what its oracles measured."""
    out = [f"check {n!r} appears twice" for n in sorted({n for n in names if names.count(n) > 1})]
    if rec.get("error") is not None or rec.get("status") == "crashed":
        return out
    out += _repeat_problems(rec["checks"])
    if not strict:
        return out
    context = rec.get("context", "run")
    if context not in ("run", "gate"):   # a results file holds run (or gate) records only
        return out + [f"context {context!r} is not a run's"]
    kinds = {c["name"]: c.get("kind") for c in rec["checks"]}
    allowed = {k for o in oracles.in_context(context) for k in o.kinds}
    reference = {n for n, k in kinds.items() if k == "reference"}
    missing = sorted(set(exp) - reference)
    if missing:
        out.append(f"checks missing for {missing}")
    extra = sorted((reference - set(exp)) | {n for n, k in kinds.items() if k not in allowed})
    if extra:
        out.append(f"unexpected checks {extra} (not the reference's values, or oracles that do not run "
                   f"in the {context} context)")
    fd = sorted(n for n, k in kinds.items() if k == "fd")
    if "fd" in allowed and (bool(fd) != bool(s.fd_step) or fd != sorted(f"fd:{n}" for n in s.wrt if s.fd_step)):
        out.append("finite-difference checks do not match the scenario's fd_step")
    return out


def _repeat_problems(cks: list) -> list:
    """backward_twice makes a repeat grad:<x>#2 for every operand exactly when one of its
    twice:<x> checks failed (the two VJPs differed), and none otherwise: replay compares a
    repeat where both sides made one, so the record must hold exactly those."""
    twice = [c for c in cks if c.get("kind") == "twice" and c["name"] != "twice:vjp"]
    have = sorted(c["name"] for c in cks if c["name"].startswith("grad:") and "#" in c["name"])
    differed = any(not c.get("passed") for c in twice)
    want = sorted(f"grad:{c['name'][len('twice:'):]}#2" for c in twice) if differed else []
    if have == want:
        return []
    return [f"repeat checks {have} where backward twice makes {want} (a repeat exactly when its two VJPs "
            "differed)"]


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
    derived = judge.judge(s, rechecked, error, crashed=(status == "crashed")).status
    if derived != status:
        out.append(f"recorded status {status!r} but the checks give {derived!r}")
    if "expects_defect" in rec and rec["expects_defect"] != s.expects_defect:
        out.append("expects_defect does not follow from the scenario")
    if "defect_tags" in rec and list(rec["defect_tags"]) != list(s.defect_tags):
        out.append("defect_tags differ from the scenario's")
    return out


def check_record(group, where: str, scen_dict: dict, rec: dict, rc: Recomputer, strict=True):
    """Add one item per recorded check plus one for the record's status to `group`;
    (bound scenario, the checks as recomputed), or None when it cannot be recomputed."""
    return check_records(group, [(where, scen_dict, rec)], rc, strict, keep=True)[0]


# Records whose comparisons are computed together, and at most about this many values
# (their recomputed checks, values included, live until then).
CHUNK = 64
CHUNK_VALUES = 16_384


def check_records(group, work: list, rc: Recomputer, strict=True, keep=False) -> list:
    """check_record for each (where, scenario dict, record) of `work`, in order, the
    comparisons of CHUNK records at a time computed together (recheck.Batch); what
    check_record returns for each when `keep` (else each is let go at once). An exception
    that escapes a record's checks stops them all where it stopped them one at a time."""
    out, k = [], 0
    with np.errstate(all="ignore"):   # forged values may overflow; the check fails, quietly
        while k < len(work):
            batch, plans, stop = recheck.Batch(), [], None
            while k < len(work) and len(plans) < CHUNK and batch.values < CHUNK_VALUES:
                try:
                    plans.append(_plan(*work[k], rc, strict, batch))
                except Exception as e:   # the records before it still count
                    stop = e
                    break
                k += 1
            batch.run()
            for plan in plans:
                done = _finish(group, plan)
                if keep:
                    out.append(done)
            if stop is not None:
                raise stop
    return out


@dataclass
class _Plan:
    """A record between its rechecks (planned, comparisons in the batch) and its items."""
    where: str
    failure: str | None = None         # the one failed item that stops the record
    accepted: list | None = None       # the accepted_error_input item
    raised: Exception | None = None    # escaped after that item: stops everything
    done: tuple = ()                   # s, exp, rec, recorded, results, strict


def _plan(where, scen_dict, rec, rc, strict, batch) -> _Plan:
    try:
        s, exp, prefill = rc.get(scen_dict)
        ref_tol = checks.tolerance(s.dtype)
    except Exception as e:   # any malformed scenario is a failed check, not a crash
        return _Plan(where, f"{where}: scenario cannot be recomputed ({type(e).__name__}: {e})")
    recorded = rec.get("checks")
    if not isinstance(recorded, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                                 for c in recorded):
        return _Plan(where, f"{where}: checks is not a list of named checks")
    s, exp, prefill, accepted = _accepted_error_input(s, exp, prefill, rec, recorded)
    try:
        by_name = {c["name"]: c for c in recorded}
        ctx = recheck.Context(s, exp, rec, by_name, _forward_ok(by_name, exp, ref_tol), memo=dict(prefill),
                               batch=batch)
    except Exception as e:
        return _Plan(where, accepted=accepted, raised=e)
    results = []
    for c in recorded:
        try:
            results.append(_recheck(c, ctx))
        except Exception as e:   # hostile JSON: a malformed value is a failed check, not a crash
            results.append(e)
    return _Plan(where, accepted=accepted, done=(s, exp, rec, recorded, results, strict))


def _finish(group, plan: _Plan):
    where = plan.where
    if plan.failure is not None:
        group.fail(plan.failure)
        return None
    group.item(plan.accepted, f"{where}: accepted_error_input")
    if plan.raised is not None:
        raise plan.raised
    s, exp, rec, recorded, results, strict = plan.done
    rechecked = []
    for c, got in zip(recorded, results):
        try:
            if isinstance(got, Exception):
                raise got
            reasons, new = got.result() if isinstance(got, (recheck.Pending, _Renamed)) else got
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
    if rec.get("scenario") != s.name:
        problems.append(f"the record is of scenario {rec.get('scenario')!r}, not {s.name!r}")
    group.item(problems, f"{where}: status")
    return s, rechecked


def _accepted_error_input(s, exp, prefill, rec, recorded) -> tuple:
    """An error input whose record holds no refusal check was taken by that build's forward
    and judged as an ordinary call (running/execute.py): it is re-derived as one, from the
    float64 reference, and the record must say so; a refusal's record must not."""
    refusal = any(c.get("kind") == "refusal" for c in recorded)
    flagged = rec.get("accepted_error_input") is True
    judged = bool(recorded) and not refusal   # (a record without checks: an error, as it stands)
    if not s.must_refuse or not (judged or flagged):
        return s, exp, prefill, (["marked accepted_error_input, but judged as a refusal"] if flagged else [])
    s = dataclasses.replace(s, must_refuse=False)
    return s, expected.expected(s), {}, ([] if flagged else
                                         ["an error input judged as an ordinary call without accepted_error_input"])


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


class Started:
    """A results file's checks under way (start_results): its header and record list
    judged into a group of their own, its records' rechecks started on the other CPUs."""

    def __init__(self, name: str, data, rc: Recomputer):
        self.name, self.data, self.head, self.running, self.error = name, data, Group(name), None, None
        self.rc = rc
        try:
            work = _work(self.head, name, data, rc)
        except Exception as e:   # raised where check_results would raise it
            self.error = e
            return
        if work is not None:
            # each process makes the identities of its own records' scenarios; the others
            # tell theirs when they are done, for the binding (binding.check)
            self.running = parallel.start(lambda g, share: check_records(g, share, rc), work, report=rc.made)

    def finish(self, group) -> None:
        """Everything into `group`, in the order a check from scratch gives it."""
        for attr in ("ok", "total"):
            setattr(group, attr, getattr(group, attr) + getattr(self.head, attr))
        group.failures += self.head.failures
        group.notes += self.head.notes
        if self.error is not None:
            raise self.error
        if self.running is None:
            return
        self.running.finish(group)
        for told in self.running.reports:
            self.rc.learn(told, self.data["scenarios"].values())
        recs = self.data["records"]
        try:
            want = results.summary([r for r in recs if isinstance(r, dict)])
        except Exception as e:
            want = f"uncomputable ({e})"
        group.check(self.data.get("summary") == want,
                    f"{self.name}: summary {self.data.get('summary')} does not match the records ({want})")

    def cancel(self) -> None:
        if self.running is not None:
            self.running.cancel()


def _work(group, name: str, data, rc: Recomputer) -> list | None:
    """The header's check and each record's place; [(where, scenario dict, record)] to
    recheck, or None when the file cannot be read as records at all."""
    if not isinstance(data, dict):
        group.fail(f"{name}: not a JSON object")
        return None
    header = _header_problems(data)
    group.item(header, f"{name}: header")
    if header:
        return None
    scenarios, recs, seen, work = data["scenarios"], data["records"], set(), []
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
        work.append((where, scenarios[key[0]], rec))
    return work



def start_results(name: str, data, rc: Recomputer) -> Started:
    """check_results begun: the rechecks run on the other CPUs while the caller does
    other work (the file's schema check), then finish(group) or cancel()."""
    return Started(name, data, rc)


def check_results(group, name: str, data, rc: Recomputer, started: Started | None = None) -> None:
    """A whole results file: header, every record, the summary counts (`started`: the
    same begun by start_results on this very data)."""
    (started or start_results(name, data, rc)).finish(group)

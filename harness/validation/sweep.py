"""Sweep evidence (sweep.json): everything the file claims re-derived from its records.

* each record is one case of the plan (sweep/derive.py's plan from the recorded
  options, the API table of this harness), no case twice; a sweep not stopped by its
  time budget holds every planned case;
* each record's status follows from its checks: "fail" exactly when a check fails;
  a crash names how the process died; a case the forward refused holds no checks;
* each failing check's verdict follows from its recorded numbers: where MLX's value
  and the oracle's are numbers, |got - want| > allowed (or not a number), with the
  oracle's value finite (gradcheck judges only there); where they are absent, the
  detail records a shape mismatch (the only failure gradcheck records without them);
* environment.json beside it, when there is one, is the environment inside it;
* the summary's counts, and every finding (signature, cases, corners, first record,
  the registered class that explains it and its limitation) are what sweep/derive.py
  and sweep/known.py give for the records, and nothing else is listed.

What no offline check can show: that MLX gives these records. The values come from
MLX; `mlx-vjpcheck replay` runs the cases again (sweep/replay.py). Numpy only.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core import jsonio
from ..evidence import paths
from ..sweep import derive
from .gradcheck import check_problems
from .groups import Group

SCHEMA = "mlx-vjpcheck/sweep/1"


@dataclass(frozen=True)
class SweepFacts:
    folder: str
    cases: int
    findings: int
    unexplained: int
    by_status: dict


def record_problems(r: dict) -> list:
    out = []
    if r["function"] != derive.api_name(r["entry"]):
        out.append(f"function {r['function']!r} is not entry {r['entry']!r}'s")
    checks = r.get("checks") or []
    failing = [c for c in checks if c["status"] == "fail"]
    status = r["status"]
    if status in ("pass", "fail"):
        if "checks" not in r or "total" not in r:
            out.append(f"a {status!r} record without its checks and their total")
        elif r["total"] < len(checks):
            out.append(f"total {r['total']} is fewer than the {len(checks)} checks recorded")
        if (status == "fail") != bool(failing):
            out.append(f"status {status!r} but {len(failing)} of its checks fail")
    elif checks:
        out.append(f"a {status!r} record holds checks")
    if status == "crash" and not r.get("how"):
        out.append("a crash that does not say how the process died")
    for k, c in enumerate(checks):
        out += [f"check {k} ({c['transform']} [{c['dtype']}]): {why}" for why in check_problems(c)]
    return out


def _same(a, b) -> bool:
    """Equal as written (NaN equal to NaN, as the file spells both the same)."""
    return jsonio.dumps(a, sort_keys=True) == jsonio.dumps(b, sort_keys=True)


def _plan_problems(doc: dict) -> list:
    p = doc["plan"]
    index, count = p["shard"]
    if count < 1 or index >= count:
        return [f"shard {p['shard']} is not I/N with 0 <= I < N"]
    planned = derive.plan(p["functions"], (index, count), p["seed"], p["generic_only"])
    keys = [(r["entry"], r["corner"], r["seed"]) for r in doc["records"]]
    out, want = [], set(planned)
    if len(set(keys)) != len(keys):
        out.append("a case is recorded twice")
    extra = [k for k in keys if k not in want]
    if extra:
        out.append(f"{len(extra)} records are no case of the recorded plan (first: {extra[0]})")
    recorded = set(keys)
    missing = [k for k in planned if k not in recorded]
    if missing and not doc["summary"]["stopped"]:
        out.append(f"{len(missing)} planned cases have no record and the sweep was not stopped (first: {missing[0]})")
    return out


def _summary_problems(doc: dict) -> list:
    s, records = doc["summary"], doc["records"]
    p = doc["plan"]
    planned = len(derive.plan(p["functions"], tuple(p["shard"]), p["seed"], p["generic_only"])) \
        if p["shard"][1] >= 1 and p["shard"][0] < p["shard"][1] else None
    out = []
    if s["planned"] != planned:
        out.append(f"planned {s['planned']} but the recorded plan has {planned} cases")
    if s["done"] != len(records):
        out.append(f"done {s['done']} but {len(records)} records")
    if s["by_status"] != derive.by_status(records):
        out.append(f"by_status {s['by_status']} but the records give {derive.by_status(records)}")
    if s["stopped"] and p["time"] is None:
        out.append("stopped by a time budget the plan does not have")
    return out


def _findings_problems(doc: dict) -> list:
    want = derive.findings_of(doc["records"])
    got = doc["findings"]
    by_sig = {tuple(f["signature"]): f for f in want}
    out, seen = [], set()
    for f in got:
        sig = tuple(f["signature"])
        if sig in seen:
            out.append(f"finding {list(sig)} is listed twice")
            continue
        seen.add(sig)
        w = by_sig.get(sig)
        if w is None:
            out.append(f"finding {list(sig)} follows from no record")
            continue
        for key in ("cases", "corners", "explained", "limitation", "first"):
            if not _same(f[key], w[key]):
                shown = "the first record showing it" if key == "first" else repr(w[key])
                out.append(f"finding {list(sig)}: {key} is not {shown} (re-derived from the records)")
    out += [f"finding {list(s)} shown by the records is not listed" for s in by_sig if s not in seen]
    return out


def check_sweep(group: Group, folder: str, doc: dict, files) -> SweepFacts:
    """Every check of one schema-valid sweep.json."""
    where = f"{folder}{paths.SWEEP}"
    if doc["schema"] != SCHEMA:
        group.fail(f"{where}: not a sweep record ({SCHEMA})")
    if folder + paths.ENVIRONMENT in files:   # written beside it since the sweep wrote one
        group.check(files.doc(folder + paths.ENVIRONMENT) == doc["environment"],
                    f"{where}: {folder}{paths.ENVIRONMENT} is not the environment recorded inside it")
    for r in doc["records"]:
        group.item(record_problems(r), f"{where}: record {r['entry']} at {r['corner']} (seed {r['seed']})")
    group.item(_plan_problems(doc), f"{where}: records against the plan")
    group.item(_summary_problems(doc), f"{where}: summary")
    group.item(_findings_problems(doc), f"{where}: findings")
    found = doc["findings"]
    return SweepFacts(folder, len(doc["records"]), len(found), sum(1 for f in found if not f["explained"]),
                      dict(doc["summary"]["by_status"]))

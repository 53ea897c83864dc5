"""What follows from a sweep's records alone: the plan of cases, each record's
signatures, the findings (one per signature) and the summary's counts.

Pure functions over plain records (numpy and the API table only, never mlx): the
sweep uses them to write sweep.json, and the validator (validation/sweep.py) uses
the same ones to re-derive every finding and count from the recorded records, so
what the evidence claims can never drift from what its records show.
"""
from __future__ import annotations

from . import api, corners, known

STATUSES = ("pass", "fail", "not applicable", "crash", "harness error")


def api_name(entry_id: str) -> str:
    return entry_id.split("[", 1)[0]


def plan(select: str | None = None, shard: tuple = (0, 1), seed: int = 0, generic_only: bool = False) -> list:
    """Every (entry, corner, seed) in a stable order, this shard's share (round robin, so
    each shard gets every kind of function), the generic points first so a short budget
    still sees every function once."""
    items = []
    for e in api.ENTRIES:
        if select and not _matches(e, select):
            continue
        for k, c in enumerate(corners.corners(e)):
            if generic_only and c.name != "generic":
                continue
            items.append((k, (e.id, c.name, seed)))
    items.sort(key=lambda t: t[0] != 0)   # stable: generic points of every entry first
    index, count = shard
    return [it for n, (_, it) in enumerate(items) if n % count == index]


def _matches(entry, select: str) -> bool:
    return any(s and (s == entry.name or s == entry.id or entry.name.startswith(s.rstrip("*")) and s.endswith("*"))
               for s in select.split(","))


def corner_class(name: str) -> str:
    head = name.split("-")
    return "-".join(head[:2]) if head[0] in ("dtype", "fill", "view", "operand") else head[0]


def symptom(check: dict) -> str:
    detail = check.get("detail") or ""
    if "shape" in detail:
        return "wrong shape"
    if check.get("got") is None:
        return "raised" if detail else "failed"
    got = check["got"]
    values = got if isinstance(got, list) else [got]
    if any(isinstance(v, float) and v != v or v in (float("inf"), float("-inf")) for v in values):
        return "non-finite"
    return "wrong value"


def signatures(record: dict) -> list:
    if record["status"] == "crash":
        return [(record["function"], "any", corner_class(record["corner"]), record["how"])]
    out = []
    for c in record.get("checks", ()):
        if c["status"] == "fail":
            sig = (record["function"], c["transform"], corner_class(record["corner"]), symptom(c))
            if sig not in out:
                out.append(sig)
    return out


def tally(records: list) -> tuple:
    """({signature: cases showing it}, {signature: the first record showing it}), in record order."""
    counts, first = {}, {}
    for rec in records:
        for sig in signatures(rec):
            counts[sig] = counts.get(sig, 0) + 1
            first.setdefault(sig, rec)
    return counts, first


def findings(counts: dict, first: dict) -> list:
    """One finding per signature, a defect that shows at the generic point standing for
    every corner where it shows too (listed), so one wrong rule is one finding; each
    matched against the registered classes (sweep/known.py)."""
    generic = {(f, t, s) for (f, t, c, s) in counts if c == "generic"}
    merged: dict = {}
    for (f, t, c, s), n in sorted(counts.items()):
        key = (f, t, "generic" if (f, t, s) in generic else c, s)
        slot = merged.setdefault(key, {"signature": list(key), "cases": 0, "corners": [],
                                       "first": first[(f, t, c, s)]})
        slot["cases"] += n
        if c not in slot["corners"]:
            slot["corners"].append(c)
        if c == "generic":
            slot["first"] = first[(f, t, c, s)]
    for slot in merged.values():
        f, t, _, s = slot["signature"]
        k = known.explain(f, t, s)
        slot["explained"] = k.id if k else None
        slot["limitation"] = k.limitation if k else ""
    return list(merged.values())


def findings_of(records: list) -> list:
    return findings(*tally(records))


def by_status(records: list) -> dict:
    out: dict = {}
    for r in records:
        out[r["status"]] = out.get(r["status"], 0) + 1
    return out

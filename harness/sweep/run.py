"""The sweep: every API entry at every corner, in crash-isolated workers, within a time
budget, one shard of the work when asked; failures grouped by signature.

A signature is (function, transform, corner class, symptom): the same defect seen at
many corners or seeds is one signature, and a second, different failure in the same
case is a signature of its own (nothing hides behind a known one). A worker that
dies is a crash finding; its case is run once more alone in a fresh process, and the
record says whether the crash repeats there or depends on what ran before it.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..running.child import Child, ChildError
from . import api, corners, known

WORKER = __name__.rsplit(".", 1)[0] + ".worker"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SweepError(ChildError):
    """A worker cannot start at all: an environment problem, not a finding."""


@dataclass(frozen=True)
class Item:
    entry: str
    corner: str
    seed: int


def plan(select: str | None = None, shard: tuple = (0, 1), seed: int = 0, generic_only: bool = False) -> list:
    """Every (entry, corner) in a stable order, this shard's share (round robin, so each
    shard gets every kind of function), the generic points first so a short budget
    still sees every function once."""
    items = []
    for e in api.ENTRIES:
        if select and not _matches(e, select):
            continue
        for k, c in enumerate(corners.corners(e)):
            if generic_only and c.name != "generic":
                continue
            items.append((k, Item(e.id, c.name, seed)))
    items.sort(key=lambda t: t[0] != 0)   # stable: generic points of every entry first
    index, count = shard
    return [it for n, (_, it) in enumerate(items) if n % count == index]


def _matches(entry: api.Entry, select: str) -> bool:
    return any(s and (s == entry.name or s == entry.id or entry.name.startswith(s.rstrip("*")) and s.endswith("*"))
               for s in select.split(","))


def corner_class(name: str) -> str:
    head = name.split("-")
    return "-".join(head[:2]) if head[0] in ("dtype", "fill", "view") else head[0]


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


@dataclass
class Sweep:
    records: list = field(default_factory=list)
    findings: dict = field(default_factory=dict)   # signature -> first record showing it
    counts: dict = field(default_factory=dict)     # signature -> number of cases showing it
    planned: int = 0
    done: int = 0
    seconds: float = 0.0
    stopped: str = ""

    def add(self, record: dict) -> None:
        self.records.append(record)
        self.done += 1
        for sig in signatures(record):
            self.counts[sig] = self.counts.get(sig, 0) + 1
            self.findings.setdefault(sig, record)


class Worker:
    def __init__(self, device: str, timeout_s: float):
        self.child = Child([sys.executable, "-m", WORKER, device], name="sweep worker", error=SweepError,
                           cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1", OPENBLAS_NUM_THREADS="1"),
                           timeout_s=timeout_s)

    def run(self, item: Item) -> dict:
        line = json.dumps({"entry": item.entry, "corner": item.corner, "seed": item.seed}) + "\n"
        answer, death = self.child.request(line)
        if death is not None:
            return _crash(item, death)
        if "harness_error" in answer:
            return {"entry": item.entry, "function": api_name(item.entry), "corner": item.corner,
                    "seed": item.seed, "status": "harness error", "detail": answer["harness_error"]}
        return answer["record"]

    def close(self):
        self.child.close()


def api_name(entry_id: str) -> str:
    return entry_id.split("[", 1)[0]


def _crash(item: Item, death: dict) -> dict:
    return {"entry": item.entry, "function": api_name(item.entry), "corner": item.corner, "seed": item.seed,
            "status": "crash", "how": death["how"], "detail": death["detail"], "stage": death["stage"]}


def _alone(item: Item, device: str, timeout_s: float) -> dict:
    """The crashed case once more, first in a fresh process."""
    w = Worker(device, timeout_s)
    try:
        return w.run(item)
    finally:
        w.close()


def sweep(items: list, *, device: str = "cpu", jobs: int = 2, budget_s: float | None = None,
          case_timeout_s: float = 120.0, progress=None) -> Sweep:
    """Run the items on `jobs` workers until done or out of time (a case in flight when
    time runs out finishes; the rest is reported as not run)."""
    result, lock = Sweep(planned=len(items)), threading.Lock()
    queue, start = list(reversed(items)), time.monotonic()

    def next_item():
        with lock:
            if budget_s is not None and time.monotonic() - start > budget_s:
                result.stopped = f"time budget of {budget_s:g} s spent"
                return None
            return queue.pop() if queue else None

    def lane():
        w = Worker(device, case_timeout_s)
        try:
            while (item := next_item()) is not None:
                rec = w.run(item)
                if rec["status"] == "crash":
                    again = _alone(item, device, case_timeout_s)
                    rec["alone"] = again["status"] if again["status"] != "crash" else f"crash ({again['how']})"
                with lock:
                    result.add(rec)
                    if progress:
                        progress(result, rec)
        finally:
            w.close()

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for f in [pool.submit(lane) for _ in range(max(1, jobs))]:
            f.result()
    result.seconds = time.monotonic() - start
    return result


def findings(result: Sweep) -> list:
    """One finding per signature, a defect that shows at the generic point standing for
    every corner where it shows too (listed), so one wrong rule is one finding."""
    generic = {(f, t, s) for (f, t, c, s) in result.counts if c == "generic"}
    merged: dict = {}
    for (f, t, c, s), n in sorted(result.counts.items()):
        key = (f, t, "generic" if (f, t, s) in generic else c, s)
        slot = merged.setdefault(key, {"signature": list(key), "cases": 0, "corners": [],
                                       "first": result.findings[(f, t, c, s)]})
        slot["cases"] += n
        if c not in slot["corners"]:
            slot["corners"].append(c)
        if c == "generic":
            slot["first"] = result.findings[(f, t, c, s)]
    for slot in merged.values():
        f, t, _, s = slot["signature"]
        k = known.explain(f, t, s)
        slot["explained"] = k.id if k else None
        slot["limitation"] = k.limitation if k else ""
    return list(merged.values())


def unexplained(found: list) -> list:
    return [f for f in found if not f["explained"]]


def summary(result: Sweep) -> dict:
    by_status: dict = {}
    for r in result.records:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    return {"planned": result.planned, "done": result.done, "seconds": round(result.seconds, 3),
            "stopped": result.stopped, "by_status": by_status}

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
from . import derive
from .derive import api_name, corner_class, signatures, symptom  # noqa: F401 (the sweep's names)

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
    """The cases to run (sweep/derive.py's plan, which the validator binds the records to)."""
    return [Item(*it) for it in derive.plan(select, shard, seed, generic_only)]


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
    """One finding per signature (sweep/derive.py, which the validator re-derives them with)."""
    return derive.findings(result.counts, result.findings)


def unexplained(found: list) -> list:
    return [f for f in found if not f["explained"]]


def summary(result: Sweep) -> dict:
    return {"planned": result.planned, "done": result.done, "seconds": round(result.seconds, 3),
            "stopped": result.stopped, "by_status": derive.by_status(result.records)}

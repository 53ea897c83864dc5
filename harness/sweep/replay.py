"""Replay a sweep: its cases measured again (sweep/measure.one in the sweep's own
crash-isolated worker, sweep/run.Worker) and each record's verdict compared.

Which records run again follows from the records themselves, never from a label:
every record that is not a clean pass (failing, crashed, not applicable, a harness
error, or any record that holds a check: a kink, a missing rule, a call not tried)
runs again; of the clean passes, a sample drawn at random here (SystemRandom: the
evidence cannot know which) runs again, all of them when the sample is as large.

A record reproduces when a measurement gives its status and the same signatures
(function, transform, corner class, symptom: the verdict, not the values, which
gradcheck's tolerances already judged). A measurement that disagrees is taken
again in a fresh process, up to ATTEMPTS times (MLX reading past a buffer gives
what memory holds: the verdict may vary between processes); the record reproduces
when any measurement agrees. A crash is re-run alone in a fresh process, as the
sweep ran it a second time (its `alone`): a crash recorded to repeat alone must
crash the same way; one recorded not to repeat alone must give that status alone,
and its crash after other cases is said not to be re-executed.
"""
from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

from . import derive, run

ATTEMPTS = 3
SAMPLE = 50   # clean passes re-executed by default


@dataclass
class Outcome:
    record: dict
    measured: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    note: str = ""

    @property
    def reproduced(self) -> bool:
        return bool(self.measured) and not self.problems

    @property
    def name(self) -> str:
        r = self.record
        return f"{r['entry']} at {r['corner']} (seed {r['seed']})"


def clean_pass(r: dict) -> bool:
    return r["status"] == "pass" and not r.get("checks")


def choose(records: list, sample: int, rng=None) -> tuple:
    """(indexes of the records to run again, clean passes sampled, clean passes in all)."""
    rng = rng or random.SystemRandom()
    must = [k for k, r in enumerate(records) if not clean_pass(r)]
    clean = [k for k, r in enumerate(records) if clean_pass(r)]
    picked = clean if sample >= len(clean) else rng.sample(clean, sample)
    return sorted(must + picked), len(picked), len(clean)


def _verdict(r: dict) -> tuple:
    sigs = sorted(derive.signatures(r)) if r["status"] in ("fail", "crash") else []
    return r["status"], sigs


def _expected_alone(r: dict) -> tuple | None:
    """A crash's recorded status when run alone (None: it crashed alone too, the same way)."""
    alone = r.get("alone") or ""
    return None if alone.startswith("crash") or not alone else (alone,)


def problems(recorded: dict, measured: dict) -> list:
    """Why one measurement does not reproduce a record (empty: it does)."""
    if recorded["status"] == "crash" and _expected_alone(recorded):
        want = _expected_alone(recorded)[0]
        return [] if measured["status"] == want else [f"alone: {want} -> {_show(measured)}"]
    (s0, g0), (s1, g1) = _verdict(recorded), _verdict(measured)
    if s0 != s1:
        return [f"status {s0} -> {_show(measured)}"]
    if g0 != g1:
        gone, new = [g for g in g0 if g not in g1], [g for g in g1 if g not in g0]
        return [f"signatures differ: recorded only {[list(g) for g in gone]}, now only {[list(g) for g in new]}"]
    return []


def _show(m: dict) -> str:
    return f"crash ({m.get('how')})" if m["status"] == "crash" else m["status"]


def _measure(worker, r: dict) -> dict:
    return worker.run(run.Item(r["entry"], r["corner"], r["seed"]))


def replay_one(r: dict, lane, fresh) -> Outcome:
    """A record measured up to ATTEMPTS times (a crash always in fresh processes)."""
    out = Outcome(r)
    crash = r["status"] == "crash"
    for attempt in range(ATTEMPTS):
        if attempt == 0 and not crash:
            m = _measure(lane, r)
        else:
            w = fresh()
            try:
                m = _measure(w, r)
            finally:
                w.close()
        out.measured.append(m)
        out.problems = problems(r, m)
        if not out.problems:
            break
    if crash and _expected_alone(r) and out.reproduced:
        out.note = (f"crashed ({r['how']}) after other cases, recorded not to crash alone: its status alone "
                    "reproduced; the crash after other cases is not re-executed")
    return out


def replay(records: list, indexes: list, device: str, jobs: int = 1, timeout_s: float = 120.0,
           on_record=lambda o: None) -> list:
    """An Outcome per chosen record, in the order of `indexes`."""
    out, lock = {}, threading.Lock()
    queue = list(reversed(indexes))

    def lane():
        w = run.Worker(device, timeout_s)
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    k = queue.pop()
                o = replay_one(records[k], w, lambda: run.Worker(device, timeout_s))
                with lock:
                    out[k] = o
                    on_record(o)
        finally:
            w.close()

    threads = [threading.Thread(target=lane, daemon=True) for _ in range(max(1, min(jobs, len(indexes))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    missing = [k for k in indexes if k not in out]
    if missing:
        raise RuntimeError(f"sweep replay stopped before {records[missing[0]]['entry']}")
    return [out[k] for k in indexes]

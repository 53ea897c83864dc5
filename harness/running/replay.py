"""Replay evidence: run every recorded scenario again in the installed MLX and say,
per record, whether it reproduced; compare what is deterministic, and treat what
is not as such on both sides.

A check reproduces when a replay measurement gives the recorded verdict with the
recorded values (within the check's own tolerance: atol + rtol |recorded|, a
non-finite value exactly), whether it passed or failed; the error text of a
record must be the recorded one. A check whose measurements differ among
themselves is nondeterministic here (MLX reading past a buffer returns whatever
memory holds, which changes from process to process): its recorded values prove
nothing either way and are not held against it. So a record that does not
reproduce at the first measurement is measured again, in fresh processes, up
to MEASUREMENTS times; it is "not reproduced" only when every measurement agrees
with every other and all of them disagree with the record. Honest evidence
therefore always replays, and a value edited in the evidence is caught unless
MLX itself cannot repeat it.

Every record is measured in a crash-isolated worker of this module
(`python -m <package>.running.replay DEVICE`): the catalog's form for run
records (execute.run), the fuzzer's (every fuzz oracle, the finding's seed) for
fuzz findings; a worker that dies is a `crashed` measurement.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from ..core import checks, record
from ..core.scenario import Scenario
from ..evidence import campaigns, paths, strict

MEASUREMENTS = 3          # at most, per record: the first, then fresh processes
WORKER = __name__         # python -m <package>.running.replay DEVICE
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Item:
    """One recorded record to replay."""
    source: str           # the evidence file it came from
    scenario: dict        # the recorded scenario
    device: str
    recorded: dict        # the recorded record
    context: str          # "run" or "fuzz"

    @property
    def name(self) -> str:
        return self.scenario.get("name", "?")


@dataclass
class Outcome:
    item: Item
    measurements: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    varying: list = field(default_factory=list)   # checks shown nondeterministic here

    @property
    def replayed(self) -> dict | None:
        return self.measurements[0] if self.measurements else None

    @property
    def reproduced(self) -> bool:
        return bool(self.measurements) and not self.problems


# --- what the evidence holds ---------------------------------------------------------------------

def collect(files) -> list:
    """Run records (results files of kind run) and fuzz findings, as items."""
    files = strict.as_files(files)
    items = []
    for name in sorted(files):
        if paths.is_results(name):
            data = files.doc(name)
            if isinstance(data, dict) and data.get("kind") == "run":
                scen = data["scenarios"]
                items += [Item(name, scen[r["scenario"]], r["device"], r, "run") for r in data["records"]]
        elif paths.folder(name).endswith(paths.FINDINGS_DIR + "/") and name.endswith(".json"):
            d = files.doc(name)
            if isinstance(d, dict) and isinstance(d.get("record"), dict):
                items.append(Item(name, d["scenario"], d["record"]["device"], d["record"], "fuzz"))
    return items


# --- comparing -----------------------------------------------------------------------------------

def _values(c: dict) -> np.ndarray:
    return checks.shaped(c.get("observed"), c.get("observed_shape"))


def _within(recorded: dict, again: dict) -> bool:
    """The replayed check gives the recorded verdict with the recorded values,
    within the check's own tolerance (non-finite values exactly)."""
    if bool(recorded.get("passed")) != bool(again.get("passed")):
        return False
    if recorded.get("observed") is None or again.get("observed") is None:
        return recorded.get("observed") is None and again.get("observed") is None
    try:
        a, b = _values(again), _values(recorded)
        if a.shape != b.shape:
            return False
        with np.errstate(all="ignore"):
            return checks.compare("replay", a, b, recorded.get("atol", 0.0), recorded.get("rtol", 0.0))["passed"]
    except (TypeError, ValueError):
        return False


def _identical(a: dict | None, b: dict | None) -> bool:
    """Two measurements of one check are the same measurement."""
    if a is None or b is None:
        return a is b
    if bool(a.get("passed")) != bool(b.get("passed")):
        return False
    try:
        return checks.same_values(_values(a), _values(b))
    except (TypeError, ValueError):
        return False


def _steady(ms: list) -> bool:
    """Every measurement the same, and none that saw itself vary (execute's `deterministic`)."""
    return all(_identical(m, ms[0]) for m in ms[1:]) and not any(
        m is not None and m.get("deterministic") is False for m in ms)


def _repeat(name: str) -> bool:
    """A repeat measurement (backward twice's grad:x#2): made only in a measurement whose two
    VJPs differed, so its presence follows the twice check's verdict, not the record's."""
    base, sep, n = name.partition("#")
    return base.startswith("grad:") and bool(sep) and n.isdigit()


def _seen_once(name: str, recorded: dict) -> bool:
    """A failure that shows nondeterminism itself (two VJPs of one call differed, and what
    the second gave): it happened when recorded and need not happen again."""
    return not recorded.get("passed") and (recorded.get("kind") == "twice" or _repeat(name))


def _verdict(passed) -> str:
    return "pass" if passed else "fail"


def _check_problem(name: str, recorded: dict | None, ms: list) -> str | None:
    if _repeat(name):   # compared where both sides made it; its presence is the twice check's
        ms = [m for m in ms if m is not None]
        if recorded is None or not ms:
            return None
    if recorded is None:   # a check the record lacks: a failure it does not show
        if ms and all(m is not None and not m.get("passed") for m in ms):
            return f"{name}: fails now{'' if _steady(ms) else ' in every measurement'}, and the record " \
                   "does not have it"
        return None
    if any(m is not None and _within(recorded, m) for m in ms) or _seen_once(name, recorded):
        return None
    if not _steady(ms):   # values MLX does not repeat: they may vary, the verdict may not
        now = {bool(m.get("passed")) for m in ms if m is not None}
        if len(now) == 1 and None not in ms and now != {bool(recorded.get("passed"))}:
            return (f"{name}: {_verdict(recorded.get('passed'))} -> {_verdict(now.pop())} in every measurement "
                    "(its values vary among them, its verdict does not)")
        return None
    m = ms[0]
    if m is None:
        return f"{name}: not measured again"
    if bool(m.get("passed")) != bool(recorded.get("passed")):
        return f"{name}: {_verdict(recorded.get('passed'))} -> {_verdict(m.get('passed'))}"
    verb = "passes" if m.get("passed") else "fails"
    return f"{name}: {verb} again, but with other values (beyond the check's tolerance)"


DEATH = re.compile(r"\bSIG[A-Z0-9]+\b|\bexit(?: code| status)? -?\d+\b")


def death(error) -> str | None:
    """How a crashed process ended, from its error text (the signal, or the exit code):
    the part of a crash text MLX repeats (the rest holds addresses and last output lines)."""
    found = DEATH.search(error) if isinstance(error, str) else None
    return found.group(0) if found else None


def _same_error(recorded: dict, m: dict) -> bool:
    """The same error text; a crash, the same status and the same death (SIGFPE is not SIGKILL)."""
    if recorded.get("status") == "crashed" or m.get("status") == "crashed":
        return recorded.get("status") == m.get("status") and death(recorded.get("error")) == death(m.get("error"))
    return recorded.get("error") == m.get("error")


def _same_kind_of_error(a: dict, b: dict) -> bool:
    """Two measurements agree on their error (for crashes: on how the process died)."""
    if a.get("status") == "crashed" and b.get("status") == "crashed":
        return death(a.get("error")) == death(b.get("error"))
    return a.get("error") == b.get("error")


def reproduces(recorded: dict, ms: list) -> tuple:
    """(problems, checks seen varying) of a record against its measurements."""
    problems, varying = [], []
    by = [{c["name"]: c for c in m.get("checks") or []} for m in ms]
    names = [c["name"] for c in recorded.get("checks") or []]
    names += sorted({n for b in by for n in b} - set(names))
    rec_by = {c["name"]: c for c in recorded.get("checks") or []}
    errors_dead = all(m.get("status") in ("error", "crashed", "invalid") for m in ms)
    for n in names:
        per = [b.get(n) for b in by]
        if n in rec_by and errors_dead and all(p is None for p in per):
            continue   # the VJP raised before this check, as the status comparison says
        why = _check_problem(n, rec_by.get(n), per)
        if why:
            problems.append(why)
        elif len(ms) > 1 and not _steady(per):
            varying.append(n)
    if not any(_same_error(recorded, m) for m in ms) and all(_same_kind_of_error(m, ms[0]) for m in ms):
        problems.append(f"error {recorded.get('error')!r} -> {ms[0].get('error')!r}")
    statuses = {m.get("status") for m in ms}
    failed = [c for c in recorded.get("checks") or [] if not c.get("passed")]
    once = statuses == {"pass"} and recorded.get("status") == "fail" and bool(failed) and all(
        _seen_once(c["name"], c) for c in failed)   # it failed only by nondeterminism seen once
    if recorded.get("status") not in statuses and len(statuses) == 1 and not once:
        m = ms[0]
        why = f" ({m.get('error')})" if m.get("error") else ""
        problems.insert(0, f"status {recorded.get('status')} -> {m.get('status')}{why}")
    return problems, varying


def compare(recorded: dict, *replayed: dict) -> list:
    """Why the replayed measurement(s) do not reproduce the recorded record (empty: they do)."""
    return reproduces(recorded, list(replayed))[0]


# --- measuring ----------------------------------------------------------------------------------

def _dead(item: Item, death: dict) -> dict:
    """A worker that died during a measurement: a crashed record."""
    return record.crashed(item.name, item.device, f"process died ({death['how']})",
                          checks=death.get("checks") or [])


class Measurer:
    """Measurements of items on one device, in this module's crash-isolated worker."""

    def __init__(self, device: str):
        from .child import Child
        self.device = device
        self.make = lambda: Child([sys.executable, "-m", WORKER, device], name="replay worker",
                                  cwd=PACKAGE_PARENT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.child = self.make()

    def measure(self, item: Item, child=None) -> dict:
        child = child or self.child
        answer, death = child.request(json.dumps({"scenario": item.scenario, "context": item.context}) + "\n")
        if death is not None:
            return _dead(item, death)
        if "harness_error" in answer:
            raise RuntimeError(f"harness error replaying {item.name}: {answer['harness_error']}")
        return answer["record"]

    def fresh(self, item: Item) -> dict:
        """A measurement in a process of its own (another history, another heap)."""
        child = self.make()
        try:
            return self.measure(item, child)
        finally:
            child.close()

    def close(self):
        self.child.close()


def replay_one(m: Measurer, item: Item) -> Outcome:
    ms = [m.measure(item)]
    problems, varying = reproduces(item.recorded, ms)
    while problems and len(ms) < MEASUREMENTS:
        ms.append(m.fresh(item))
        problems, varying = reproduces(item.recorded, ms)
    return Outcome(item, ms, problems, varying)


def replay(items: list, available: list, on_record=lambda rec: None, jobs: int = 1) -> list:
    """An Outcome per item, in order; items on a device this MLX lacks are not measured
    (their outcome says so)."""
    out = [None] * len(items)
    lock = threading.Lock()
    for device in sorted({it.device for it in items}):
        idx = [k for k, it in enumerate(items) if it.device == device]
        if device not in available:
            for k in idx:
                out[k] = Outcome(items[k], [], [f"not reproduced here: this MLX has no {device} device"])
            continue
        shares = [idx[j::max(1, jobs)] for j in range(max(1, min(jobs, len(idx))))]

        def work(share):
            m = Measurer(device)
            try:
                for k in share:
                    o = replay_one(m, items[k])
                    with lock:
                        out[k] = o
                        on_record(o)
            finally:
                m.close()
        threads = [threading.Thread(target=work, args=(s,), daemon=True) for s in shares]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        missing = [k for k in idx if out[k] is None]
        if missing:
            raise RuntimeError(f"replay stopped before {items[missing[0]].name}")
    return out


# --- the worker (a child process) ----------------------------------------------------------------

def _measure_fuzz(s, device: str) -> dict:
    """The fuzzer's measurement of a finding: every fuzz oracle, the case's seed, twice."""
    from . import execute
    seed = campaigns.fd_seed(s.name)
    try:
        rec = execute.measure(s, device, "fuzz", seed)[0]
        execute.mark_determinism(rec, execute.measure(s, device, "fuzz", seed)[0])
        return rec
    except execute.Unjudgeable as e:
        return record.record(s.name, device, status="invalid", error=f"cannot be judged now: {e}")


def _measure(msg: dict, device: str) -> dict:
    from ..cases import bind
    from . import execute
    s = bind(Scenario.from_dict(msg["scenario"]))
    if msg.get("context") == "fuzz":
        return _measure_fuzz(s, device)
    return execute.run(s, device, "run")


def worker_main(argv=None) -> int:
    import signal

    from . import channel, devices
    device = (argv or sys.argv[1:])[0]
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C
    channel.open_protocol()
    devices.select(device)
    return channel.serve(lambda msg: {"record": _measure(msg, device)})


if __name__ == "__main__":
    sys.exit(worker_main())

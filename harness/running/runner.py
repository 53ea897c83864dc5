"""Drive the worker over a list of scenarios on each device, surviving crashes.

Knows no op by name: it moves scenario records in and result records out.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from ..core import scenario as scenario_mod
from ..core import record
from ..core.exits import died, exit_text
from ..evidence import atomic
from .child import Watchdog, ended_on_interrupt

# The worker runs as `python -m <this package>.running.worker`, whatever name the
# package is imported under (installed as mlx_vjpcheck, or harness from a checkout).
WORKER = __name__.rsplit(".", 1)[0] + ".worker"
# Started from the package's parent folder, so a checkout's package is the one imported.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# A scenario that takes longer than this is killed and recorded as crashed: MLX can
# spin forever (a sum over a zero-length axis of host memory, on 0.32.4's CPU).
SCENARIO_TIMEOUT_S = 120.0


def _crash_record(s, device: str, rc: int, stderr: str, timed_out: bool = False) -> dict:
    how = f"timed out after {SCENARIO_TIMEOUT_S:g} s" if timed_out else None
    return record.crashed(s.name, device, died(rc, stderr, how=how), seconds=None)


def default_jobs() -> int:
    """One worker per CPU (the calls are small: MLX itself keeps to one thread for them)."""
    return max(1, min(os.cpu_count() or 1, 8))


def run_device(scenarios: list, device: str, on_record=None, jobs: int = 1) -> list:
    """All scenarios on one device, in `jobs` workers side by side, records in the
    scenarios' order; a dead worker costs one `crashed` record."""
    if jobs <= 1 or len(scenarios) < 2 * jobs:
        return _run_list(scenarios, device, on_record)
    import threading
    from concurrent.futures import ThreadPoolExecutor
    lock = threading.Lock()

    def report(rec):   # progress callbacks come from several threads
        with lock:
            if on_record:
                on_record(rec)
    # Interleaved shares: neighbours in the catalog cost alike, so each worker gets a fair mix.
    shares = [scenarios[k::jobs] for k in range(jobs)]
    stop, procs = threading.Event(), set()
    pool = ThreadPoolExecutor(jobs)
    futures = [pool.submit(_run_list, share, device, report, stop, procs) for share in shares]
    try:
        parts = [f.result() for f in futures]
    except BaseException:   # Ctrl-C reaches the main thread only: end every worker now
        stop.set()
        for proc in list(procs):
            proc.kill()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    by_name = {r["scenario"]: r for part in parts for r in part}
    return [by_name[s.name] for s in scenarios]


def _run_list(scenarios: list, device: str, on_record=None, stop=None, procs=None) -> list:
    """`stop` (an Event) ends the list between workers; `procs` holds the live worker so
    that an interrupted parent can end it."""
    records, start = [], 0
    with tempfile.TemporaryDirectory(prefix="vjpcheck-") as tmp:
        path = os.path.join(tmp, "scenarios.json")
        atomic.write_text(path, scenario_mod.dump_catalog(scenarios))
        while start < len(scenarios) and not (stop is not None and stop.is_set()):
            start = _one_worker(scenarios, path, device, start, records, on_record, procs)
    return records


class WorkerError(RuntimeError):
    """The worker died outside any scenario: a broken environment, not a case (exit 2)."""


def _one_worker(scenarios, path, device, start, records, on_record, procs=None) -> int:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with tempfile.TemporaryFile(mode="w+") as err:   # a file: a full pipe cannot stall the worker
        proc = subprocess.Popen([sys.executable, "-m", WORKER, path, device, str(start)],
                                stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=PACKAGE_PARENT)
        watchdog = Watchdog(proc, SCENARIO_TIMEOUT_S)   # armed per scenario: a hang is a crash
        if procs is not None:
            procs.add(proc)
        try:
            with ended_on_interrupt(proc):   # the worker ignores SIGINT: end it here
                current = _read(proc, records, on_record, watchdog)
                rc = proc.wait()
        finally:
            watchdog.stop()
            if procs is not None:
                procs.discard(proc)
        err.seek(0)
        stderr = err.read()
    if current is None:
        if rc != 0:
            raise WorkerError(f"the worker failed before running a scenario ({exit_text(rc, 'exit')}): "
                              f"{(stderr.strip().splitlines() or ['(no output)'])[-1]}")
        return len(scenarios)
    rec = _crash_record(scenarios[current], device, rc, stderr, watchdog.fired)
    records.append(rec)
    if on_record:
        on_record(rec)
    return current + 1


def _read(proc, records, on_record, watchdog):
    """Collect the worker's records; the index of a scenario it started but did not finish."""
    current = None
    for line in proc.stdout:
        msg = json.loads(line)
        if "start" in msg:
            current = msg["start"]
            watchdog.arm()
        else:
            watchdog.stop()
            records.append(msg["record"])
            if on_record:
                on_record(msg["record"])
            current = None
    return current


def run(scenarios: list, devices: list, on_record=None, jobs: int = 1) -> list:
    return [r for d in devices for r in run_device(scenarios, d, on_record, jobs)]

"""Run a campaign in this process (with one crash-isolated worker) or as
shards in parallel processes, and write its out dir.

Each finding's minimal case is measured once more in the worker before it is
written, and its checks say which of their values came back the same
(`deterministic`, running/execute.py mark_determinism): memory read past a
buffer changes between runs, and replay must know which values it can hold
the finding to. Ctrl-C (or SIGTERM) only raises a flag (`STOP`), which the
campaign reads between cases: an interrupt can never be swallowed where it
lands (a garbage-collector callback, hypothesis's internals), and the
campaign always records that it was interrupted.
"""
from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..core import record
from ..evidence import campaigns, paths
from ..running import execute
from . import database, findings, pool, search, targets

SCHEMA = campaigns.SCHEMA
DTYPES = ("float32", "float16", "bfloat16")
STOP = threading.Event()   # set by the interrupt handler; read between cases


def on_interrupt(signum, frame):
    """SIGINT / SIGTERM handler: the first asks the campaign to stop after the case
    it is running (its findings are kept); a second one stops at once."""
    if STOP.is_set():
        raise KeyboardInterrupt
    STOP.set()


def _checked(run_case):
    """run_case that ends the search, from an ordinary frame, once STOP is set."""
    def run(s, n):
        if STOP.is_set():
            raise KeyboardInterrupt
        return run_case(s, n)
    return run
CLI = __name__.split(".")[0] + ".cli"   # shards run `python -m <package>.cli fuzz ...`


class ShardError(RuntimeError):
    """A shard process failed outright (one line, exit 2)."""


@contextlib.contextmanager
def quiet(budget_s):
    """The display when none is asked for: events go nowhere."""
    yield lambda kind, payload: None


def supported_dtypes(worker, ops) -> dict:
    """Dtypes whose forward MLX accepts on this device: rejected forwards are
    not gradient defects, so the generator leaves them out."""
    out = {}
    for op in ops:
        ok = [dt for dt in DTYPES if worker.run(targets.minimal_case(op, dt), probe=True).status != "invalid"]
        out[op] = ok or ["float32"]
    return out


def fd_seed(s) -> int:
    return campaigns.fd_seed(s.name)


def remeasure(worker, f) -> None:
    """Measure a finding's minimal case once more and mark, per check, whether the
    second measurement agreed (running/execute.py): replay compares what did."""
    s = f.scenario_obj()
    again = worker.run(s, fd_seed(s))
    execute.mark_determinism(f.record, again.record or {})


def _tee(on_event, on_finding, worker):
    def event(kind, payload):
        if kind == "finding":
            remeasure(worker, payload)
            if on_finding is not None:
                on_finding(payload)
        on_event(kind, payload)
    return event


def _hypothesis_version() -> str:
    import hypothesis
    return hypothesis.__version__


def finish(info: dict) -> dict:
    """How the campaign ended and whether it can be run again to the same findings
    (evidence/campaigns.py: the rule the validator re-derives)."""
    info["interrupted"] = bool(info.get("interrupted")) or STOP.is_set()
    shards = info.get("shard_stats") or [info["stats"]]
    ends = {campaigns.ended_by(info["interrupted"], st["cases"], info.get("max_cases")) for st in shards}
    info["ended_by"] = "interrupt" if "interrupt" in ends else ("time" if "time" in ends else "cases")
    info["replayable"] = campaigns.replayable(info)
    return info


def run_single(ops, device, seed, budget_s, max_cases, db_path, display=quiet, on_finding=None,
               dtypes=None) -> dict:
    """One campaign. Ctrl-C ends it early: what was found is returned, marked interrupted.
    `dtypes` (replay of a campaign): the recorded ones instead of probing this MLX."""
    t0 = time.monotonic()
    with pool.Worker(device) as w:
        dtypes = dtypes or supported_dtypes(w, ops)
        setup_s = time.monotonic() - t0
        with display(budget_s) as on_event:
            camp = search.Campaign(_checked(lambda s, n: w.run(s, fd_seed(s))), ops, dtypes, seed=seed,
                                   budget_s=budget_s, max_cases=max_cases,
                                   db=database.open_db(db_path), on_event=_tee(on_event, on_finding, w),
                                   device=device)
            found = camp.run()
    st = camp.stats
    elapsed = st.elapsed()
    started_at = time.time() - elapsed
    info = {"schema": SCHEMA, "seed": seed, "seeds": [seed], "budget_s": budget_s, "max_cases": max_cases,
            "device": device, "ops": ops, "dtypes": dtypes, "shards": 1, "setup_s": round(setup_s, 3),
            "started_at": started_at, "hypothesis": _hypothesis_version(),
            "database": None if str(db_path).lower() == "none" else str(db_path),
            "stats": {"cases": st.cases, "passed": st.passed, "failed": st.failed,
                      "invalid": st.invalid, "unconfirmed": st.unconfirmed,
                      "cache_hits": st.cache_hits, "rounds": st.rounds,
                      "elapsed_s": round(elapsed, 3),
                      "cases_per_s": round(st.cases / elapsed, 2) if elapsed else None,
                      "per_op": st.per_op},
            "unconfirmed_samples": st.unconfirmed_samples, "interrupted": camp.interrupted,
            "from_database": sorted(f.signature for f in found if f.from_database)}
    return {"findings": found, "campaign": finish(info)}


def _shard_cmd(i, ops, device, seed, budget_s, max_cases, db_path, out):
    cmd = [sys.executable, "-m", CLI, "fuzz", "--time", str(budget_s), "--seed", str(seed + i),
           "--out", str(out), "--device", device, "--ops", ",".join(ops), "--db", str(db_path),
           "--no-progress", "--shard-index", str(i)]
    return cmd + (["--max-examples", str(max_cases)] if max_cases else [])


def _wait(procs) -> list:
    """Each shard's (stdout, stderr), forwarding an interrupt (STOP) to the shards once:
    each keeps what it found and exits 130."""
    forwarded = False
    while any(p.poll() is None for p in procs):
        if STOP.is_set() and not forwarded:
            forwarded = True
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
        time.sleep(0.1)
    return [p.communicate() for p in procs]


def run_shards(n, ops, device, seed, budget_s, max_cases, db_path, display=quiet) -> dict:
    """N campaigns with seeds seed..seed+n-1 in parallel processes, merged by signature."""
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="vjpcheck-shards-") as tmp:
        outs = [Path(tmp) / f"shard-{i}" for i in range(n)]
        errs = [tempfile.TemporaryFile(mode="w+") for _ in range(n)]   # a full pipe would stall a shard
        # Their own sessions: a Ctrl-C at the terminal reaches this process only, which
        # forwards it once (a second one would make a shard stop without writing).
        procs = [subprocess.Popen(_shard_cmd(i, ops, device, seed, budget_s, max_cases, db_path, o),
                                  stdout=subprocess.DEVNULL, stderr=errs[i], text=True,
                                  cwd=pool.ROOT, start_new_session=True) for i, o in enumerate(outs)]
        try:
            with display(budget_s) as on_event:
                _wait(procs)
                on_event("done", None)
        except BaseException:   # a second Ctrl-C: end the shards now
            for p in procs:
                p.kill()
                p.wait()
            raise
        interrupted = STOP.is_set()
        for i, p in enumerate(procs):
            if p.returncode not in (0, 1, 130) or not (outs[i] / paths.CAMPAIGN).is_file():
                if interrupted and p.returncode == 130:
                    continue   # interrupted before it had anything to keep
                errs[i].seek(0)
                tail = (errs[i].read().strip().splitlines() or ["no output"])[-1]
                raise ShardError(f"fuzz shard {i} failed (exit {p.returncode}): {tail}")
        for e in errs:
            e.close()
        kept = [o for o in outs if (o / paths.CAMPAIGN).is_file()]
        if not kept:
            raise KeyboardInterrupt
        groups = [findings.load(o) for o in kept]
        infos = [findings.load_campaign(o) for o in kept]
    for i, (g, info) in enumerate(zip(groups, infos)):
        offset = info["started_at"] - t0   # shard start-up counts: times are from our start
        for f in g:
            f.shard = i
            f.time_found_s = round(f.time_found_s + offset, 3)
            f.time_minimal_s = round(f.time_minimal_s + offset, 3)
    merged = findings.merge(groups)
    info = merge_info(infos, seed, n)
    info["interrupted"] = interrupted or any(i.get("interrupted") for i in infos)
    return {"findings": merged, "campaign": finish(info)}


def merge_info(infos, seed, n) -> dict:
    keys = ("cases", "passed", "failed", "invalid", "unconfirmed", "cache_hits", "rounds")
    stats = {k: sum(i["stats"][k] for i in infos) for k in keys}
    stats["elapsed_s"] = max(i["stats"]["elapsed_s"] for i in infos)
    stats["cases_per_s"] = round(stats["cases"] / stats["elapsed_s"], 2) if stats["elapsed_s"] else None
    stats["per_op"] = _merge_per_op([i["stats"].get("per_op") or {} for i in infos])
    first = {k: v for k, v in infos[0].items() if k not in ("ended_by", "replayable")}
    return dict(first, seed=seed, seeds=[i["seed"] for i in infos], shards=n, stats=stats,
                shard_stats=[i["stats"] for i in infos],
                unconfirmed_samples=[u for i in infos for u in i["unconfirmed_samples"]][:20],
                from_database=sorted({s for i in infos for s in i.get("from_database", [])}))


def _merge_per_op(rows: list) -> dict:
    out = {}
    for per_op in rows:
        for op, row in per_op.items():
            acc = out.setdefault(op, {"cases": 0, "pass": 0, "fail": 0, "invalid": 0, "oracles": []})
            for k in ("cases", "pass", "fail", "invalid"):
                acc[k] += int(row.get(k, 0))
            acc["oracles"] = sorted(set(acc["oracles"]) | set(row.get("oracles") or []))
    return out


def run(ops, device, seed, budget_s, max_cases, db_path, shards=1, display=quiet, on_finding=None):
    """`display(budget_s)`: a context manager yielding on_event(kind, payload);
    `on_finding(finding)`: told of each finding as it is made (single campaigns)."""
    if shards > 1:
        return run_shards(shards, ops, device, seed, budget_s, max_cases, db_path, display)
    return run_single(ops, device, seed, budget_s, max_cases, db_path, display, on_finding)


def write(root, result, env) -> None:
    info = dict(result["campaign"], findings=[
        {k: getattr(f, k) for k in ("signature", "time_found_s", "time_minimal_s", "size", "shard",
                                    "from_database")}
        for f in result["findings"]])
    findings.write(root, result["findings"], info, env)


def replay_records(scenarios: list, device: str, on_record=lambda rec: None) -> list:
    """Each scenario through every oracle again, in a crash-isolated worker: the
    records a replay of fuzz evidence compares with the recorded ones."""
    out = []
    with pool.Worker(device) as w:
        for s in scenarios:
            o = w.run(s, fd_seed(s))
            rec = o.record or record.record(s.name, device, status="invalid", error=o.reason)
            out.append(rec)
            on_record(rec)
    return out

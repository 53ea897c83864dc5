"""The fuzzer against native binaries: hypothesis generation and shrinking
(fuzz/search.Campaign) with the C++ suite's server mode as the executor and
its float64 reference as the oracle.

`build_and_test.py --fuzz SECONDS` builds the pristine and the patched
binaries and starts one campaign per binary, side by side, each in its own
process (python -m <package>.native.fuzz, below); then every finding of
either campaign is run again on both binaries, so the table says for each
finding what pristine and patched do with it.

Per case the server answers with the reference checks (forward, every
gradient, exact zeros for float32) or the VJP's exception; a binary that dies
is one crashed outcome (a finding unless it died in the forward) and the
server restarts. Cases the suite cannot run are skipped, and the campaign
counts them by reason.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path

from ..core.exits import exit_text
from ..core.scenario import Scenario
from ..evidence import atomic, paths, rundir
from . import server as native_server

MODULE = __name__          # `python -m` this module, whatever the package is called
ROOT = Path(__file__).resolve().parents[2]
DTYPES = ("float32", "float16", "bfloat16")
SCHEMA = "mlx-vjpcheck/native-fuzz/1"


def native_ops() -> list:
    """Fuzz targets the native suite implements."""
    from .. import ops
    from ..fuzz import targets
    return [name for name in targets.names() if ops.get(name).native]


class Executor:
    """run_case for search.Campaign over one server; tallies skips by reason."""

    def __init__(self, server: native_server.Server):
        self.server = server
        self.skipped = collections.Counter()
        self.crashes = 0

    def outcome(self, s: Scenario, result: dict):
        from ..fuzz import engine
        from ..judging import judge
        if "skip" in result:
            reason = result["skip"]["reason"]
            self.skipped[reason] += 1
            return engine.Outcome(s, "invalid", reason=f"skipped by the native suite: {reason}")
        if "invalid" in result:
            return engine.Outcome(s, "invalid", reason=result["invalid"])
        if "crashed" in result:
            self.crashes += 1
            c = result["crashed"]
            return engine.crashed(s, "cpu", c["stage"], c["checks"], c["how"], c["detail"])
        from .suite import half_precision
        rec = dict(result["record"], expects_defect=s.expects_defect, defect_tags=list(s.defect_tags))
        rec = half_precision(s, rec)
        err = result.get("vjp_error")
        verdict = judge.judge(s, rec["checks"], f"{err['type']}: {err['message']}" if err else rec["error"])
        rec["status"] = verdict.status
        return engine.Outcome(s, "fail" if verdict.failures else "pass", rec, list(verdict.failures))

    def __call__(self, s: Scenario, n: int = 0):
        return self.outcome(s, self.server.run(s.to_dict()))


def supported_dtypes(run_case, ops) -> dict:
    """Dtypes whose forward this binary accepts, per op (as fuzz/campaign.py does)."""
    from ..fuzz import targets
    out = {}
    for op in ops:
        ok = [dt for dt in DTYPES if run_case(targets.minimal_case(op, dt)).status != "invalid"]
        out[op] = ok or ["float32"]
    return out


def campaign(binary, tolerances, seed, budget_s, max_cases=None) -> dict:
    """One campaign over one binary, in this process: {"findings", "campaign"}."""
    from ..fuzz import database, search
    ops = native_ops()
    t0 = time.monotonic()
    with native_server.Server(binary, tolerances) as srv:
        run_case = Executor(srv)
        dtypes = supported_dtypes(run_case, ops)
        setup_s = time.monotonic() - t0
        run_case.skipped.clear()
        camp = search.Campaign(run_case, ops, dtypes, seed=seed, budget_s=budget_s,
                               max_cases=max_cases, db=database.open_db(None), device="cpu")
        found = camp.run()
        starts = srv.starts
    st = camp.stats
    elapsed = st.elapsed()
    info = {"schema": SCHEMA, "binary": str(binary), "seed": seed, "seeds": [seed], "budget_s": budget_s,
            "max_cases": max_cases, "device": "cpu", "ops": ops, "dtypes": dtypes, "shards": 1,
            "setup_s": round(setup_s, 3), "started_at": time.time() - elapsed, "database": None,
            "executor": "native server", "server_starts": starts,
            "skipped": [{"reason": r, "cases": n} for r, n in sorted(run_case.skipped.items())],
            "stats": {"cases": st.cases, "passed": st.passed, "failed": st.failed,
                      "invalid": st.invalid, "unconfirmed": st.unconfirmed,
                      "cache_hits": st.cache_hits, "rounds": st.rounds, "elapsed_s": round(elapsed, 3),
                      "cases_per_s": round(st.cases / elapsed, 2) if elapsed else None},
            "unconfirmed_samples": st.unconfirmed_samples}
    return {"findings": found, "campaign": info}


def write_campaign(out, result, env) -> None:
    from ..fuzz import findings
    info = dict(result["campaign"], findings=[
        {k: getattr(f, k) for k in ("signature", "time_found_s", "time_minimal_s", "size", "shard")}
        for f in result["findings"]])
    with rundir.staged(out) as tmp:
        findings.write(tmp, result["findings"], info, env)


# --- the parent: both variants side by side, then every finding on both -------------------

def _child_cmd(binary, tolerances, seed, budget_s, max_cases, out, checkout=None) -> list:
    cmd = [sys.executable, "-m", MODULE, "--binary", str(binary), "--tolerances", str(tolerances),
           "--seed", str(seed), "--time", str(budget_s), "--out", str(out)]
    return cmd + (["--max-examples", str(max_cases)] if max_cases else []) + \
        (["--mlx-checkout", str(checkout)] if checkout else [])


def side_by_side(binaries: dict, work: Path, seed: int, budget_s: float, max_cases=None,
                 log=None, checkout=None) -> dict:
    """{variant: out dir} after one campaign per binary, run in parallel processes.
    `log(cid, argv, rc, seconds, stdout, stderr)` records each process."""
    tolerances = native_server.write_tolerances(work / "tolerances.json")
    from ..running.child import run_side_by_side
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    outs = {variant: work / f"fuzz-{variant}" for variant in binaries}
    argvs = {variant: _child_cmd(exe, tolerances, seed, budget_s, max_cases, outs[variant], checkout)
             for variant, exe in binaries.items()}
    done = run_side_by_side({v: (argv, env) for v, argv in argvs.items()}, cwd=ROOT)
    for variant, (rc, out, err, seconds) in done.items():
        if log is not None:
            log(f"fuzz-{variant}", argvs[variant], rc, seconds, out, err)
        if rc != 0:
            tail = (err.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"the {variant} fuzz campaign failed ({exit_text(rc, 'exit')}): {tail}")
    return outs


def cross_check(binaries: dict, work: Path, outs: dict, out_of_scope: dict) -> dict:
    """Every finding of either campaign run on both binaries.

    out_of_scope: signature -> reason, from the regression corpus."""
    from ..fuzz import findings as F
    tolerances = work / "tolerances.json"
    rows, seen = [], {}
    for variant, d in outs.items():
        for f in F.load(d):
            seen.setdefault(f.signature, []).append((variant, f))
    servers = {v: native_server.Server(exe, tolerances) for v, exe in binaries.items()}
    try:
        for sig, found in sorted(seen.items()):
            variant, f = min(found, key=lambda vf: vf[1].size)
            s = f.scenario_obj()
            status = {}
            for v, srv in servers.items():
                o = Executor(srv).outcome(s, srv.run(f.scenario))
                status[v] = {"status": o.status, "signature": o.signature,
                             "error": (o.record or {}).get("error") or o.reason or None}
            reason = out_of_scope.get(sig)
            rows.append({"signature": sig, "found_by": sorted(v for v, _ in found), "scenario": s.name,
                         "size": f.size, "pristine": status.get("pristine"),
                         "patched": status.get("patched"), "in_scope": reason is None,
                         "reason": reason or ""})
    finally:
        for srv in servers.values():
            srv.close()
    return {"schema": SCHEMA, "rows": rows}


def verdict(summary: dict, campaigns: dict) -> tuple:
    """(exit code, line): 0 when the patched campaign found nothing in scope."""
    rows = summary["rows"]
    patched = [r for r in rows if "patched" in r["found_by"]]
    in_scope = [r for r in patched if r["in_scope"]]
    still = [r for r in rows if r["in_scope"] and (r["patched"] or {}).get("status") == "fail"]
    counts = ", ".join(f"{v}: {c['stats']['cases']} cases ({c['stats']['cases_per_s']}/s), "
                       f"{len(c['findings'])} findings" for v, c in campaigns.items())
    if in_scope or still:
        first = (in_scope or still)[0]["signature"]
        return 1, (f"{len(in_scope)} in-scope findings against the patched units, {len(still)} in-scope "
                   f"findings the patched units still fail (first: {first}); {counts}")
    return 0, f"no in-scope finding against the patched units; {counts}"


# --- the child process: one campaign over one binary -----------------------------------

def child_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    p.add_argument("--binary", required=True)
    p.add_argument("--tolerances", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time", type=float, required=True)
    p.add_argument("--max-examples", type=int)
    p.add_argument("--out", required=True)
    p.add_argument("--mlx-checkout", default=None,
                   help="the checkout the binary was built from: the subject its environment records")
    args = p.parse_args(argv)
    from ..running import environment
    result = campaign(args.binary, args.tolerances, args.seed, args.time, args.max_examples)
    env = environment.record(["cpu"], mlx_checkout=args.mlx_checkout)
    env["native_binary"] = args.binary
    write_campaign(args.out, result, env)
    st = result["campaign"]["stats"]
    print(f"{len(result['findings'])} findings from {st['cases']} cases ({st['cases_per_s']}/s)")
    return 0


def write_summary(out: Path, summary: dict, campaigns: dict) -> None:
    data = dict(summary, campaigns={v: {k: c[k] for k in ("stats", "skipped", "dtypes", "server_starts",
                                                          "seed", "budget_s")}
                                    for v, c in campaigns.items()})
    atomic.write_json(Path(out) / "fuzz-summary.json", data)


def load_campaign(d) -> dict:
    info = json.loads((Path(d) / paths.CAMPAIGN).read_text(encoding="utf-8"))
    return info


if __name__ == "__main__":
    sys.exit(child_main())

"""`build_and_test.py --fuzz SECONDS`: the Python fuzzer against both builds of a gate.

The gate's two MLX packages (pristine and patched units, variants.py) are each
put first on PYTHONPATH of one campaign process (this module's child, below:
`fuzz/campaign.run_single`, every op, every oracle of `mlx-vjpcheck fuzz`),
side by side for the same time and seed. Then every finding of either campaign
runs again on both builds, through the fuzz worker (every oracle again), and
the table says what each build does with it.

A finding fails the gate when it reproduces on the patched build and either its
op is in the patch's scope (the ops the patch is meant to fix: --fixes, else
the ops whose findings the patch changes, all of gather_mm / gather_qmm when one
changes) or the pristine build passes it (the patch introduced it). A finding
both builds fail outside the scope is pre-existing and listed as such; one whose
signature the regression corpus marks out of the patch's scope is listed with
that entry's reason. Each campaign's directory records the checkout (commit,
mlx/version.h, flags) as its subject, never the installed wheel.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..core.exits import exit_text
from ..evidence import atomic, paths

SCHEMA = "mlx-vjpcheck/gate-fuzz/1"
SUMMARY = "fuzz-summary.json"
MODULE = __name__


# --- children (run with a build's package first on PYTHONPATH) ---------------------------

def child_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    p.add_argument("--time", type=float)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-examples", type=int)
    p.add_argument("--ops", default=None)
    p.add_argument("--out")
    p.add_argument("--environment", help="JSON file: the environment record to write")
    p.add_argument("--recheck", help="JSON file: a list of scenarios to run through every oracle again")
    args = p.parse_args(argv)
    from ..fuzz import campaign, targets
    if args.recheck:
        return _recheck(args)
    import signal

    def _term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, _term)
    ops = args.ops.split(",") if args.ops else targets.names()
    env = json.loads(Path(args.environment).read_text(encoding="utf-8"))
    import mlx.core as mx
    env["mlx_imported"] = {"version": mx.__version__, "file": mx.__file__}
    result = campaign.run_single(ops, "cpu", args.seed, args.time, args.max_examples, "none")
    from ..evidence import rundir
    with rundir.staged(args.out) as tmp:
        campaign.write(tmp, result, env)
    st = result["campaign"]["stats"]
    print(f"{len(result['findings'])} findings from {st['cases']} cases ({st['cases_per_s']}/s)")
    return 130 if result["campaign"].get("interrupted") else 0


def _recheck(args) -> int:
    from ..cases import bind
    from ..core.scenario import Scenario
    from ..fuzz import campaign, pool
    items = json.loads(Path(args.recheck).read_text(encoding="utf-8"))
    out = []
    with pool.Worker("cpu") as w:
        for d in items:
            s = bind(Scenario.from_dict(d))
            o = w.run(s, campaign.fd_seed(s))
            out.append({"scenario": s.name, "status": o.status, "signature": o.signature,
                        "error": (o.record or {}).get("error") or o.reason or None})
    atomic.write_json(args.out, out)
    return 0


# --- the parent ----------------------------------------------------------------------------

def _argv(*extra) -> list:
    return [sys.executable, "-m", MODULE, *map(str, extra)]


def side_by_side(gate, built: dict, args, env: dict) -> dict:
    """{variant: campaign out dir}, one campaign per build in parallel processes."""
    from ..running.child import run_side_by_side
    from . import inputs as GI
    from . import suites as GS
    outs, commands = {}, {}
    for v, b in built.items():
        p = gate.work / f"environment-{v}.json"
        atomic.write_json(p, dict(env, gate_variant=v))
        outs[v] = gate.work / f"fuzz-{v}"
        argv = _argv("--time", args.fuzz, "--seed", args.seed, "--out", outs[v], "--environment", p,
                     *(["--max-examples", args.max_examples] if args.max_examples else []),
                     *(["--ops", args.fuzz_ops] if args.fuzz_ops else []))
        commands[v] = (argv, GS.python_env(b, gate))
    for v, (rc, stdout, stderr, seconds) in run_side_by_side(commands, cwd=GI.PACKAGE_PARENT).items():
        gate.rec.record(f"fuzz-{v}", commands[v][0], GI.PACKAGE_PARENT, rc, seconds, stdout, stderr)
        if rc != 0:
            tail = (stderr.strip().splitlines() or ["no output"])[-1]
            raise GI.StepFailed(f"the {v} fuzz campaign failed ({exit_text(rc, 'exit')}): {tail[:300]}")
    return outs


def recheck(gate, built: dict, scenarios: list) -> dict:
    """{variant: {scenario name: {status, signature, error}}}: every scenario through every
    oracle of the fuzzer on each build."""
    from . import inputs as GI
    from . import suites as GS
    path = gate.work / "recheck.json"
    atomic.write_json(path, scenarios)
    out = {}
    for v, b in built.items():
        res = gate.work / f"recheck-{v}.json"
        e = gate.rec.run(f"recheck-{v}", _argv("--recheck", path, "--out", res), GI.PACKAGE_PARENT,
                         env=GS.python_env(b, gate))
        if e["exit_code"] != 0:
            raise GI.StepFailed(f"running the findings again on the {v} build failed "
                                f"({exit_text(e['exit_code'], 'exit')}): see {{out}}/{e['stderr']}")
        out[v] = {r["scenario"]: r for r in json.loads(res.read_text(encoding="utf-8"))}
    return out


def planned_ops(gate, fixes) -> tuple:
    """(ops, how): what --fuzz searches when --fuzz-ops is not given: --fixes' ops; else
    every op the series' manifest claims and every op the diff's touched functions reach
    (touched.inferred_ops), all of TARGET when one is; each only if it can be fuzzed. ([],
    why) when that is nothing (--fixes none, a patch that reaches no op): every op then."""
    from ..fuzz import targets
    from ..judging.gate_verdict import TARGET
    from ..ops import registry
    from . import touched
    if fixes == "none":
        return [], "--fixes none"
    if fixes:
        want, how = set(fixes), "--fixes"
    else:
        claims = {op for op, _ in gate.claims or ()}
        reached = set(touched.inferred_ops(gate.touched, registry().values()))
        want = claims | reached | (set(TARGET) if (claims | reached) & set(TARGET) else set())
        how = (f"the series' manifest ({len(claims)} ops) and the functions the diff changes "
               f"({len(reached)} ops)")
    fuzzable = set(targets.names())
    return sorted(want & fuzzable), how + (f"; not fuzzable: {', '.join(sorted(want - fuzzable))}"
                                           if want - fuzzable else "")


def unfuzzed(planned: list, campaigns: dict) -> list:
    """The planned ops that got no case on some build's campaign (stats.per_op)."""
    return sorted(op for op in planned
                  if any(((c.get("stats") or {}).get("per_op") or {}).get(op, {}).get("cases", 0) == 0
                         for c in campaigns.values()))


def summarize(outs: dict, checked: dict, fixes, out_of_scope: dict, claimed_signatures=None,
              claimed_ops=None) -> dict:
    """One row per signature either campaign found, with what each build does with the
    smallest counterexample, and the verdict for it. A finding fails the gate when it is
    new on patched (pristine passes it), worse on patched (a gradient-rule oracle flags it
    where pristine only fails another), or fails both builds in a gradient-rule oracle with
    a signature the patch claims (an in-scope regression-corpus entry's, or any of an op
    named by --fixes)."""
    from ..fuzz import findings as F
    from ..judging.gate_verdict import TARGET
    seen = {}
    for v, d in outs.items():
        for f in F.load(d):
            seen.setdefault(f.signature, []).append((v, f))
    rows = []
    for sig, found in sorted(seen.items()):
        _, f = min(found, key=lambda vf: vf[1].size)
        name = f.scenario["name"]
        rows.append({"signature": sig, "op": f.op, "found_by": sorted(v for v, _ in found), "scenario": name,
                     "size": f.size, "pristine": checked.get("pristine", {}).get(name),
                     "patched": checked.get("patched", {}).get(name)})
    bad = lambda r, v: (r[v] or {}).get("status", "fail") != "pass"  # noqa: E731
    held = gate_oracles()
    if fixes == "none":
        scope = []
    elif fixes:
        scope = sorted(fixes)
    else:   # the ops whose findings change, and those a series' manifest claims
        changed = {r["op"] for r in rows if bad(r, "pristine") != bad(r, "patched")} | set(claimed_ops or ())
        scope = sorted(changed | (set(TARGET) if changed & set(TARGET) else set()))
    explicit = bool(fixes) and fixes != "none"
    claimed = set(claimed_signatures or ())
    for r in rows:
        reason = out_of_scope.get(r["signature"])
        now, before = oracle_of(r, "patched"), oracle_of(r, "pristine")
        if not bad(r, "patched"):
            r["verdict"] = "passes patched"
        elif reason:
            r.update(verdict=f"out of scope: {reason}", in_scope=False)
        elif not bad(r, "pristine"):
            r["verdict"] = "NEW on patched"
        elif now in held and before not in held:
            r["verdict"] = f"WORSE on patched (the {now} oracle; pristine only fails {before})"
        elif r["op"] in scope and now in held and (explicit or r["signature"] in claimed
                                                   or (r["patched"] or {}).get("signature") in claimed):
            r["verdict"] = "in scope, still failing patched"
        elif r["op"] in scope and now in held:
            r["verdict"] = "pre-existing (fails on both; a signature the regression corpus does not give the patch)"
        elif r["op"] in scope:
            r["verdict"] = (f"pre-existing (fails on both; flagged by the {now} oracle, "
                            "which the gate does not hold the patch to)")
        else:
            r["verdict"] = "pre-existing (fails on both, op out of scope)"
        r.setdefault("in_scope", r["op"] in scope)
    return {"schema": SCHEMA, "scope": scope, "rows": rows}


def gate_oracles() -> set:
    """The oracles a gate holds a patch to for the ops in its scope (gate.HELD: the
    first-order ones). A finding both builds fail that only another oracle (second order,
    vmap, ...) flags is another rule's defect, pre-existing."""
    from ..judging.gate_verdict import HELD
    return set(HELD)


def oracle_of(row: dict, variant: str = "patched") -> str:
    """The oracle that flags the row's scenario on one build (from its signature:
    op__gradient__oracle__kind__form), else the finding's own."""
    sig = (row.get(variant) or {}).get("signature") or row["signature"]
    parts = sig.split("__")
    return parts[2] if len(parts) >= 3 else "?"


def verdict(summary: dict, campaigns: dict) -> tuple:
    rows = summary["rows"]
    blamed = [r for r in rows if r["verdict"] in ("NEW on patched", "in scope, still failing patched")
              or r["verdict"].startswith("WORSE")]
    pre = [r for r in rows if r["verdict"].startswith("pre-existing")]
    counts = ", ".join(f"{v}: {c['stats']['cases']} cases ({c['stats']['cases_per_s']}/s), "
                       f"{len(c.get('findings', []))} findings" for v, c in campaigns.items())
    tail = f"; {len(pre)} pre-existing outside the scope ({', '.join(summary['scope']) or 'none'}); {counts}"
    planned = summary.get("planned") or []
    missing = unfuzzed(planned, campaigns)
    if planned:
        tail += f"; fuzzed {len(planned) - len(missing)}/{len(planned)} ops of the patch's scope"
    if blamed:
        return 1, (f"{len(blamed)} findings against the patched build are in scope or new "
                   f"(first: {blamed[0]['signature']}: {blamed[0]['verdict']})" + tail)
    if missing:
        return 1, (f"{len(missing)} ops of the patch's scope got no fuzz case on a build "
                   f"({', '.join(missing)}): give --fuzz more seconds" + tail)
    return 0, "no finding against the patched build in scope or new" + tail


def run(args, gate, fixes, say) -> dict:
    """build_and_test.py --fuzz on a project with bindings: the run directory written,
    {"summary", "campaigns"} or {"failed": one line}."""
    from ..cases import files
    from ..running import environment
    from . import build as GB
    from . import suites as GS
    from . import run as GR
    corpus = files.regressions()
    out_of_scope = {e.meta.get("signature"): e.reason for e in corpus if not e.in_scope}
    claimed = {e.meta.get("signature") for e in corpus if e.in_scope}
    state = {}
    planned, how = ([o.strip() for o in args.fuzz_ops.split(",") if o.strip()], "--fuzz-ops") if args.fuzz_ops \
        else planned_ops(gate, fixes)
    if planned and not args.fuzz_ops:
        args.fuzz_ops = ",".join(planned)
    say(f"fuzzing {len(planned) or 'every fuzzable'} ops ({how})")

    def body(tmp):
        built = GB.build_variants(gate)
        GS.import_check(gate, built["pristine"])
        GS.import_check(gate, built["patched"])
        env = environment.record(["cpu"], mlx_checkout=gate.src)
        env["native"] = GR.native_environment(gate, 0.0)
        say(f"fuzzing the pristine and the patched build side by side for {args.fuzz:g} s each")
        outs = side_by_side(gate, built, args, env)
        campaigns = {}
        for v, d in outs.items():
            # The run directory's own manifest covers these files: no nested manifests.
            shutil.copytree(d, Path(tmp) / d.name, ignore=shutil.ignore_patterns(paths.MANIFEST))
            campaigns[v] = dict(json.loads((d / paths.CAMPAIGN).read_text(encoding="utf-8")))
        from ..fuzz import findings as F
        scen = {f.scenario["name"]: f.scenario for d in outs.values() for f in F.load(d)}
        say(f"running the {len(scen)} findings on both builds")
        checked = recheck(gate, built, list(scen.values())) if scen else {v: {} for v in built}
        summary = summarize(outs, checked, fixes, out_of_scope, claimed, {op for op, _ in gate.claims or ()})
        summary["planned"], summary["planned_how"] = planned, how
        summary["campaigns"] = {v: {k: c.get(k) for k in ("stats", "dtypes", "seed", "budget_s", "ops")}
                                for v, c in campaigns.items()}
        atomic.write_json(Path(tmp) / SUMMARY, summary)
        state.update(summary=summary, campaigns=campaigns)
        return {}
    outcome = GR.staged_run(gate, args.out, body, "native-fuzz", args.replace)
    return outcome if "failed" in outcome else state


if __name__ == "__main__":
    sys.exit(child_main())

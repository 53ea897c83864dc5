"""Evidence directories for validator tests, built from the package's own functions (no mlx).

The "observed" values stand in for MLX: the float64 reference itself for a
correct call, and a deliberately wrong gradient for a call tagged with a known
defect on the sorted path, so the records carry passes and failures whose
verdicts the validator must re-derive. Files go through evidence.rundir, so the
layout (and manifest) is exactly what `mlx-vjpcheck run` writes.
"""
from __future__ import annotations

import contextlib
import functools
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.cases import expected as expect
from mlx_vjpcheck.cases import files as case_files
from mlx_vjpcheck.cli import validate as validate_cli
from mlx_vjpcheck.core import checks as checks_mod
from mlx_vjpcheck.core import verdict
from mlx_vjpcheck.core.scenario import dump_catalog
from mlx_vjpcheck.evidence import atomic, manifest, results, rundir
from mlx_vjpcheck.oracles import FIRST_ORDER
from mlx_vjpcheck.running import environment

ENV = {"python": "3.11.7", "platform": "test-platform", "mlx": None, "numpy": np.__version__,
       "packages": {}, "compiler": None, "mlx_checkout_commit": None, "devices": {"cpu": "cpu"}}
PASSING = ["gmm/report_example/joint/unsorted", "gmm/pair_loss/hessian/unsorted",
           "qmm4/varied/left_repeat/unsorted"]
FAILING = ["gmm/report_example/joint/sorted"]
ERRORED = ["gmm/left_repeat/rank2_indices/sorted"]
CRASHED = ["gmm/backing_tail/pos/sorted"]
NAMES = PASSING + FAILING + ERRORED + CRASHED


def scenarios(names=NAMES) -> list:
    by_name = {s.name: s for s in catalog.catalog()}
    return [by_name[n] for n in names]


def observed(s, wrong: bool) -> dict:
    exp = expect.expected(s)
    obs = {k: np.asarray(v, dtype=np.float32).astype(np.float64) for k, v in exp.items()}
    if wrong:   # the defect: the first differentiated operand's gradient is off by one
        obs[f"grad:{s.wrt[0]}"] = obs[f"grad:{s.wrt[0]}"] + 1.0
    for name in s.wrt if s.fd_step else ():
        obs[f"fd:{name}"] = exp[f"grad:{name}"]   # FD of a correct forward follow the maths
    return obs


def run_checks(s, exp: dict, obs: dict) -> list:
    """The checks `run` makes (the reference and elementwise-difference oracles)
    from given observations, as the oracles (harness/oracles/) would from MLX's."""
    tol, fd_tol = checks_mod.tolerance(s.dtype), checks_mod.tolerance(s.dtype, "fd")
    out = [checks_mod.compare(k, obs[k], exp[k], *tol) for k in exp]
    return out + [checks_mod.compare(f"fd:{n}", obs[f"grad:{n}"], obs[f"fd:{n}"], *fd_tol, kind="fd")
                  for n in (s.wrt if s.fd_step else ())]


def record(s, device="cpu", wrong=False) -> dict:
    obs = observed(s, wrong)
    checks = run_checks(s, expect.expected(s), obs)
    return {"scenario": s.name, "device": device, "context": "run", "checks": checks, "error": None,
            "expects_defect": s.expects_defect, "defect_tags": list(s.defect_tags),
            "status": verdict.status(checks), "seconds": 0.001}


def error_record(s, device="cpu") -> dict:
    err = "ValueError: [scatter_add_axis] Indices of dimension 2 does not match array of dimension 1."
    return {"scenario": s.name, "device": device, "checks": [], "error": err,
            "status": verdict.status([], err), "seconds": 0.001}


def crash_record(s, device="cpu") -> dict:
    return {"scenario": s.name, "device": device, "checks": [], "status": "crashed",
            "error": "process died (signal SIGSEGV)", "seconds": None}


def results_data() -> dict:
    """A fresh copy of the run fixture's results document (each caller may edit its own)."""
    return json.loads(_results_text())


@functools.cache
def _results_text() -> str:
    # built once per process: the records' float64 references are the costly part
    recs = ([record(s) for s in scenarios(PASSING)] + [record(s, wrong=True) for s in scenarios(FAILING)]
            + [error_record(s) for s in scenarios(ERRORED)] + [crash_record(s) for s in scenarios(CRASHED)])
    # Scenarios picked by name, as `run --scenarios FILE` would: the validator checks each
    # one against the catalog but not the record set.
    prov = environment.provenance(["mlx-vjpcheck", "run", "--scenarios", "picked.json"],
                                  {"filter": None, "scenarios": "picked.json"}, catalog.digest())
    # Through JSON: the validator always sees what a file holds.
    return json.dumps(results.build(scenarios(), recs, dict(ENV), provenance=prov))


def run_dir(out) -> Path:
    data = results_data()
    with rundir.staged(out) as tmp:
        atomic.write_json(Path(tmp) / "results.json", data)
        atomic.write_json(Path(tmp) / "environment.json", data["environment"])
    return Path(out)


def native_dir(out, corpus=()) -> Path:
    """The native layout: pristine fails the tagged scenario, patched passes all; rows in
    the form gate/compare.py's comparison() writes them. `corpus`: names of regression-corpus
    entries to add as a gate over the catalog and the corpus has them (pristine fails each,
    patched passes those in scope; rows with the corpus fields), with the gate's
    scenarios.json (what `build_and_test.py --replay` runs again)."""
    names = PASSING + FAILING
    entries = {e.scenario.name: e for e in case_files.regressions()}
    extra = [entries[n] for n in corpus]
    scens = scenarios(names) + [e.scenario for e in extra]
    pristine = results.build(scens, [record(s) for s in scenarios(PASSING)]
                             + [record(s, wrong=True) for s in scenarios(FAILING)]
                             + [record(e.scenario, wrong=True) for e in extra], dict(ENV), kind="native-pristine")
    patched = results.build(scens, [record(s) for s in scenarios(names)]
                            + [record(e.scenario, wrong=not e.in_scope) for e in extra], dict(ENV), kind="native-patched")
    by = {s.name: s for s in scens}
    rows = [{"scenario": r["scenario"], "op": by[r["scenario"]].op, "device": r["device"], "pristine": r["status"],
             "patched": q["status"], "expects_defect": by[r["scenario"]].expects_defect_under(FIRST_ORDER),
             "source": "catalog",
             "in_scope": True}
            for r, q in zip(pristine["records"], patched["records"])]
    for row in rows:
        e = entries.get(row["scenario"]) if corpus else None
        if e is not None:
            row.update(expects_defect=e.expects_defect and e.scenario.expects_defect_under(FIRST_ORDER),
                       source="regression", in_scope=e.in_scope, signature=e.meta.get("signature"),
                       recorded_pristine=e.meta["pristine"]["status"], **({} if e.in_scope else {"reason": e.reason}))
    commands = [{"id": cid, "argv": ["c++", "-c", f"{cid}.cpp"], "cwd": "/tmp/build", "exit_code": 0,
                 "seconds": 0.5, "stdout": f"logs/{cid}.out", "stderr": f"logs/{cid}.err"}
                for cid in ("compile-pristine", "compile-patched", "run-pristine", "run-patched")]
    with rundir.staged(out) as tmp:
        tmp = Path(tmp)
        atomic.write_json(tmp / "results-pristine.json", json.loads(json.dumps(pristine)))
        atomic.write_json(tmp / "results-patched.json", json.loads(json.dumps(patched)))
        atomic.write_json(tmp / "comparison.json", {"units": ["mlx/primitives.cpp"], "rows": rows, "skipped": []})
        atomic.write_json(tmp / "commands.json", commands)
        atomic.write_json(tmp / "environment.json", ENV)
        atomic.write_text(tmp / "patch.diff", "--- a/x.cpp\n+++ b/x.cpp\n@@ -1 +1 @@\n-a\n+b\n")
        if corpus:
            atomic.write_text(tmp / "scenarios.json", dump_catalog(scens) + "\n")
        for c in commands:
            atomic.write_text(tmp / c["stdout"], f"compiled {c['id']}\n")
            atomic.write_text(tmp / c["stderr"], "")
    return Path(out)


def finding_files(s, rec: dict) -> tuple:
    """(index entry, record file, reproducer) of one finding, as fuzz/findings.py writes them."""
    from mlx_vjpcheck.validation import fuzz as fuzz_checks
    from mlx_vjpcheck.validation import records as record_checks
    from mlx_vjpcheck.validation.groups import Group
    exp = {k: np.asarray(v).tolist() for k, v in expect.expected(s).items()}
    done = record_checks.check_record(Group("fixture"), "fixture", s.to_dict(), rec, record_checks.Recomputer())
    derived = fuzz_checks._derived(done[0], done[1], rec)
    sig = derived["signature"]
    entry = dict(derived, seed=0, round=1, time_found_s=0.5, time_minimal_s=1.0, cases_before=3, shrunk=True,
                 first_size=derived["size"], found_at="2026-01-01T00:00:00+00:00", shard=None,
                 from_database=False, files={"record": f"findings/{sig}.json",
                                             "reproducer": f"findings/{sig}_repro.py"})
    detail = {"schema": "mlx-vjpcheck/fuzz-finding/3", "signature": sig, "oracle": entry["oracle"],
              "oracles": entry["oracles"], "scenario": s.to_dict(), "record": rec, "expected": exp,
              "size": entry["size"]}
    detail = json.loads(json.dumps(detail, sort_keys=True))
    return entry, detail, fuzz_checks.reproducer_text(detail, entry, s)


def campaign_info(entries: list, **over) -> dict:
    from mlx_vjpcheck.evidence import campaigns
    stats = {"cases": 40, "passed": 30, "failed": 10, "invalid": 0, "unconfirmed": 0, "cache_hits": 0,
             "rounds": 2, "elapsed_s": 2.0, "cases_per_s": 20.0, "per_op": {}}
    info = {"schema": campaigns.SCHEMA, "seed": 0, "seeds": [0], "budget_s": 10.0, "max_cases": None,
            "device": "cpu", "ops": ["gather_mm"], "dtypes": {"gather_mm": ["float32"]}, "shards": 1,
            "setup_s": 0.1, "started_at": 0.0, "database": None, "stats": stats, "unconfirmed_samples": [],
            "interrupted": False, "from_database": [], "hypothesis": "6.155.2",
            "findings": [{k: e[k] for k in ("signature", "time_found_s", "time_minimal_s", "size", "shard",
                                            "from_database")} for e in entries]}
    info.update(over)
    info["ended_by"] = campaigns.ended_by(info["interrupted"], info["stats"]["cases"], info["max_cases"])
    info["replayable"] = campaigns.replayable(info)
    return info


def fuzz_dir(out, marker=None) -> Path:
    """Findings layout (as fuzz.findings writes it); with `marker`, the reproducer is
    replaced by one that would create `marker` if anything ran it (the layout then
    fails its reproducer check, and nothing may run it)."""
    entry, detail, script = json.loads(_fuzz_finding_text())
    if marker:
        script = f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
    with rundir.staged(out) as tmp:
        tmp = Path(tmp)
        atomic.write_json(tmp / "findings.json", [entry])
        atomic.write_json(tmp / entry["files"]["record"], detail)
        atomic.write_text(tmp / entry["files"]["reproducer"], script)
        atomic.write_json(tmp / "campaign.json", campaign_info([entry]))
        atomic.write_json(tmp / "environment.json", ENV)
    return Path(out)


def versions_dir(out) -> Path:
    """Version-matrix layout: probe 'probe' absent in 0.1.0, present in 0.2.0."""
    from mlx_vjpcheck.versions import matrix as versions
    script = b"import sys\nsys.exit(1)\n"
    cells = {"0.1.0": (0, "absent"), "0.2.0": (1, "present")}
    releases = [{"version": v, "package": "mlx-cpu", "spec": f"mlx[cpu]=={v}", "install": {"status": "ok"},
                 "install_log": f"logs/{v}/install.log",
                 "probes": {"probe": {"exit_code": code, "status": st, "verdict": f"VERDICT: defect {st}",
                                      "stdout": f"logs/{v}/probe.stdout", "stderr": f"logs/{v}/probe.stderr"}}}
                for v, (code, st) in cells.items()]
    doc = {"schema": versions.SCHEMA, "kind": "versions", "device": "cpu",
           "exit_status": {str(k): v for k, v in versions.EXIT_STATUS.items()},
           "probes": [{"id": "probe", "file": "probes/probe.py", "sha256": manifest.sha256(script)}],
           "releases": releases,
           "first_affected": {"probe": {"first": "0.2.0", "last_unaffected": "0.1.0"}},
           "summary": {"releases": 2, "installed": 2, "cells": {"present": 1, "absent": 1, "cannot test": 0}}}
    with rundir.staged(out) as tmp:
        tmp = Path(tmp)
        atomic.write_json(tmp / "versions.json", doc)
        atomic.write_json(tmp / "environment.json", ENV)
        atomic.write_bytes(tmp / "probes" / "probe.py", script)
        for v, (code, st) in cells.items():
            for f in ("install.log", "probe.stderr"):
                atomic.write_text(tmp / "logs" / v / f, f"{v} {f}\n")
            atomic.write_text(tmp / "logs" / v / "probe.stdout", f"mlx {v}, device cpu\nVERDICT: defect {st}\n")
    return Path(out)


@functools.cache
def _fuzz_finding_text() -> str:
    """fuzz_dir's one finding (index entry, record file, reproducer), built once per process."""
    s = scenarios(FAILING)[0]
    return json.dumps(finding_files(s, dict(record(s, wrong=True), context="fuzz")))


def _fuzz_record() -> str:
    return json.loads(_fuzz_finding_text())[0]["files"]["record"]


FUZZ_RECORD = _fuzz_record()   # findings/<signature>.json of fuzz_dir's one finding


def rewrite_manifest(root) -> None:
    """What a careful forger does after editing a file."""
    atomic.write_text(Path(root) / manifest.NAME, manifest.render(root))


def edit_json(path, fn, remanifest: bool) -> None:
    path = Path(path)
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data, indent=1, sort_keys=True))
    if remanifest:
        rewrite_manifest(path.parent)


def validate(path, env=None):
    """validate_artifacts.py in a subprocess: (returncode, stdout, stderr)."""
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, str(root / "validate_artifacts.py"), str(path)],
                       capture_output=True, text=True, timeout=120, env=env, cwd=root)
    return p.returncode, p.stdout, p.stderr


def check(path):
    """The validator in-process (fast): (returncode, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = validate_cli.script([str(path)])
    return rc, out.getvalue(), err.getvalue()


def with_build_record(root, tests=True) -> Path:
    """A gate directory made rebuildable, as build_and_test.py writes one: the build record
    (MLX checkout commit, the patch's hash, the flags of the unit it compiled), the exact
    scenarios and MLX's own test results (`tests`); the manifest redone."""
    import hashlib
    root = Path(root)
    env = json.loads((root / "environment.json").read_text())
    env["native"] = {"mlx_checkout_commit": "0123456789abcdef0123456789abcdef01234567", "opt": "as-built",
                     "patch_sha256": hashlib.sha256((root / "patch.diff").read_bytes()).hexdigest(),
                     "units": ["mlx/primitives.cpp"], "unit_flags": {"mlx/primitives.cpp": ["-O3", "-DNDEBUG"]}}
    (root / "environment.json").write_text(json.dumps(env, indent=1, sort_keys=True))
    names = {r["scenario"] for r in json.loads((root / "comparison.json").read_text())["rows"]}
    if not (root / "scenarios.json").exists():
        by_name = {s.name: s for s in catalog.catalog()}
        (root / "scenarios.json").write_text(dump_catalog([by_name[n] for n in sorted(names)]) + "\n")
    if tests:
        row = {"suite": "cpp", "test": "test_gather_mm", "pristine": "pass", "patched": "pass", "change": ""}
        (root / "mlx-tests.json").write_text(json.dumps({"schema": "mlx-vjpcheck/mlx-tests/1", "rows": [row]}))
    rewrite_manifest(root)
    return root

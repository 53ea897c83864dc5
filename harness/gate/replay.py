"""`build_and_test.py --replay EVIDENCE`: does a gate's evidence reproduce?

The evidence (a gate run directory, or a bundle of one) must validate first.
From it come the checkout commit (the given --mlx-source must be at it), the
patch, the optimisation level, the stages and the exact scenarios (each as the
gate ran it: catalog, regression corpus or finding, recorded_entries); the two
builds are made again (from the cache when they are there: a cache entry is
keyed by everything that shapes it, so a reused build is the same build) and
everything runs again into a new run directory. Then, per record of every
results file (harness and C++ suite, pristine and patched) and per MLX test of
both builds: reproduced or not, and why not (the rule of `mlx-vjpcheck
replay`: the same status, every check the same pass/fail, its values within the
recorded tolerance; an MLX test: the same outcome). As there, a record that does
not reproduce at the first measurement is measured again in fresh processes on
the same build (up to running.replay.MEASUREMENTS in all) and is "not
reproduced" only when its measurements agree among themselves and all disagree
with the record: values MLX cannot repeat (memory read past a buffer, as the
pristine gather_mm/gather_qmm rhs-sorted+bcast-left VJPs do) prove nothing
either way.

Exit 0 when every record and every MLX test reproduced, 1 otherwise, 2 bad
input (evidence that does not validate, another commit, no patch).
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from ..core import jsonio
from ..evidence import atomic, paths, rundir
from ..running import environment
from ..running import replay as run_replay
from ..judging.gate_verdict import mlx_confirmed as confirmed
from ..native import build as nb
from ..native import suite as native_suite
from . import compare as GC
from . import inputs as GI
from . import run as GR
from . import suites as GS
from . import variants as nvar

REPLAY = "replay.json"
SCHEMA = "mlx-vjpcheck/gate-replay/1"


def load_evidence(path, check) -> dict:
    """{relative path: bytes} of evidence that validates (InputError otherwise).
    `check(evidence) -> (lines, passed)` is the validator (validation/evidence.py; the
    command line hands it over, so this stage does not import a sibling)."""
    from ..evidence.load import BadInput, load
    try:
        ev = load(path)
    except BadInput as e:
        raise GI.InputError(str(e))
    try:
        lines, passed = check(ev)
    except Exception as e:   # the validator itself failed: say so in one line
        raise GI.InputError(f"{path} could not be validated ({type(e).__name__}: {str(e)[:200]}): "
                           "replay refused")
    if not passed:
        bad = [ln for ln in lines if "FAIL" in ln or "fail" in ln][:1]
        raise GI.InputError(f"{path} does not validate: replay refused"
                           + (f" ({bad[0].strip()[:200]})" if bad else " (run validate_artifacts.py on it)"))
    return ev.files


def recorded_gate(files: dict) -> dict:
    """What the evidence says was built and run."""
    def js(name):
        return jsonio.member(files, name) if name in files else None
    env = js(paths.ENVIRONMENT)
    if not isinstance(env, dict) or not isinstance(env.get("native"), dict):
        raise GI.InputError("the evidence has no gate environment (environment.json with a 'native' record): "
                           "only build_and_test.py run directories can be replayed this way")
    native = env["native"]
    commit = native.get("mlx_checkout_commit") or env.get("mlx_checkout_commit")
    if not commit:
        raise GI.InputError("the evidence records no MLX checkout commit: it cannot be rebuilt")
    if paths.PATCH not in files:
        raise GI.InputError("the evidence holds no patch.diff: it cannot be rebuilt")
    if paths.SCENARIOS not in files:
        raise GI.InputError("the evidence holds no scenarios.json: nothing to run again")
    tests = js(GI.MLX_TESTS)
    return {"env": env, "native": native, "commit": commit, "patch": files[paths.PATCH].decode("utf-8"),
            "opt": native.get("opt", "as-built"), "stages": tuple(native.get("stages") or ("native",)),
            "filter": tests.get("filter") if isinstance(tests, dict) else None,
            "scenarios": files[paths.SCENARIOS].decode("utf-8"), "tests": tests,
            "test_reruns": _reruns(js("gate.json")),
            "results": {name: js(name) for name in files if paths.is_results(name)}}


def recorded_entries(files: dict, entries: list) -> list:
    """The evidence's scenarios (`entries`: scenarios.json as loaded) as its gate ran them.
    scenarios.json holds them bare, a catalog file, so every one loads as a catalog entry;
    where each came from is what the gate chose (the catalog, the regression corpus, a
    scenario file) and what its comparison rows say, which the validator has checked
    against this package's catalog and corpus. A corpus entry is this package's entry of
    that name (its kind, whether the patch is held to it and why not, its signature and
    recorded pristine status: what the comparison and the verdict read), when it is the
    same scenario and its row does not say otherwise; a row's regression or finding
    otherwise comes from the row (a corpus-format file or a finding given with
    --scenarios); anything else stays a catalog entry."""
    from ..cases import files as F
    rows = {}
    for name in sorted(files):
        if name == paths.COMPARISON or name.endswith("/" + paths.COMPARISON):
            doc = jsonio.member(files, name)
            for r in (doc.get("rows") if isinstance(doc, dict) else None) or []:
                if isinstance(r, dict):
                    rows.setdefault(r.get("scenario"), r)
    corpus = {e.scenario.name: e for e in F.regressions()}
    out = []
    for e in entries:
        row = rows.get(e.scenario.name) or {}
        source, known = row.get("source"), corpus.get(e.scenario.name)
        if known is not None and known.scenario == e.scenario and source in (None, "regression"):
            out.append(known)
        elif source == "regression" and row.get("recorded_pristine") in F.STATUSES:
            pristine, in_scope = row.get("recorded_pristine"), row.get("in_scope", True) is not False
            out.append(F.Entry(e.scenario, e.source, "regression", pristine != "pass", in_scope,
                               "" if in_scope else str(row.get("reason") or ""),
                               {"signature": row.get("signature"), "pristine": {"status": pristine}}))
        elif source == "finding":
            out.append(F.Entry(e.scenario, e.source, "finding", True))
        else:
            out.append(e)
    return out


def _by_key(records) -> dict:
    return {(r.get("scenario"), r.get("device")): r for r in records or [] if isinstance(r, dict)}


def compare_records(recorded: dict, new: dict, again=None) -> list:
    """[{file, scenario, device, reproduced, problems, measurements, varying}] for every
    recorded record. `again(file, [scenario names]) -> [records]`: the named scenarios of
    that results file measured once more in a fresh process on the same build; each
    record that does not reproduce is measured so again, up to run_replay.MEASUREMENTS
    measurements in all, and judged by run_replay.reproduces (checks whose measurements
    differ among themselves are nondeterministic: `varying`, not held against it)."""
    rows = []
    for name, data in sorted(recorded.items()):
        if not isinstance(data, dict):
            continue
        first = _by_key((new.get(name) or {}).get("records"))
        items = []
        for rec in data.get("records") or []:
            key = (rec.get("scenario"), rec.get("device"))
            items.append((rec, key, [first[key]] if key in first else []))
        for _ in range(run_replay.MEASUREMENTS - 1):
            todo = [(rec, key, ms) for rec, key, ms in items if ms and run_replay.compare(rec, *ms)]
            if again is None or not todo:
                break
            got = _by_key(again(name, list(dict.fromkeys(key[0] for _, key, _ in todo))))
            for rec, key, ms in todo:
                if key in got:
                    ms.append(got[key])
        for rec, key, ms in items:
            problems, varying = run_replay.reproduces(rec, ms) if ms else (["not run again"], [])
            rows.append({"file": name, "scenario": key[0], "device": key[1], "recorded": rec.get("status"),
                         "replayed": ms[0].get("status") if ms else None,
                         "reproduced": not problems, "problems": problems,
                         "measurements": len(ms), "varying": varying})
    return rows


def measure_again(gate, out: dict, entries: list, passing: dict | None = None):
    """compare_records' `again` for a gate replay: the named scenarios of a results file
    run once more, in new processes, on the build and by the suite that made the file.
    `passing`: {results file: scenario names recorded passing there}, from which the
    scenarios run first in later re-measurements are taken."""
    builds = {v: nvar.Variant(v, {p: Path(d) for p, d in b["parts"].items()}, {})
              for v, b in (out.get("gate") or {}).get("builds", {}).items()}
    by = {e.scenario.name: e.scenario for e in entries}
    native_rec = out.get("native_rec") or gate.rec
    where = {}
    for v in GI.VARIANTS:
        if "harness" in gate.stages:
            where[paths.results_for(v)] = ("harness", v)
        if "native" in gate.stages:
            where[(gate.native_dir + "/" if gate.native_dir else "") + paths.results_for(v)] = ("native", v)
    count = {}

    def again(name: str, names: list) -> list:
        if name not in where or where[name][1] not in builds:
            return []
        stage, v = where[name]
        scen = [by[n] for n in names if n in by]
        if not scen:
            return []
        k = count[name] = count.get(name, 0) + 1
        cid = f"replay-again-{stage}-{v}-{k}"
        # From the second re-measurement on, other scenarios run first in the process (a
        # different set each time): values that depend on what the process did before (MLX
        # reading memory past a buffer, left by earlier work) then vary among the
        # measurements and count as nondeterministic; a value MLX computes stays the same.
        before = _perturbers(by, names, k, (passing or {}).get(name, ()))
        run_list = before + scen
        path = native_suite.write_input(run_list, gate.work / f"{cid}.json")
        if stage == "harness":
            run = GS.run_harness(gate, builds[v], path, cid)
        else:
            run = GS.run_native(gate, builds[v], path, native_rec, cid)[0]
        got = native_suite.results_for(run_list, run, {}, f"replay-{v}", model=stage == "native")["records"]
        wanted = set(names)
        return [r for r in got if isinstance(r, dict) and r.get("scenario") in wanted]
    return again


def _perturbers(by: dict, names: list, k: int, passing=(), n: int = 3) -> list:
    """n scenarios recorded passing (not among `names`) to run before the k-th
    re-measurement, k >= 2: a different, fixed choice for each k; none for the first."""
    if k < 2:
        return []
    others = sorted((set(by) & set(passing)) - set(names))
    if not others:
        return []
    start = ((k - 2) * n * 7919) % len(others)
    return [by[others[(start + i) % len(others)]] for i in range(min(n, len(others)))]


def recorded_handoff(tests: dict | None, say) -> list:
    """The regression test files the evidence ran (its "handoff" rows), as this package
    ships them (patch/tests): run again on both builds. One the package lacks is said and
    left out (its rows then do not reproduce)."""
    from ..core import resources
    rows = (tests or {}).get("rows") if isinstance(tests, dict) else None
    names = sorted({str(r.get("test", "")).split(".")[0] for r in rows or []
                    if isinstance(r, dict) and r.get("suite") == "handoff"})
    out = []
    for name in names:
        path = resources.patch_dir() / "tests" / f"{name}.py"
        if name.isidentifier() and path.is_file():
            out.append(path)
        else:
            say(f"note: the regression test {name!r} the evidence ran is not in this package: not run again")
    return out


def _reruns(gate_doc) -> dict:
    """The MLX tests the gate ran again ({suite:test: {variant: [outcomes]}}), as the
    validator reads them (well-formed entries only)."""
    from ..judging.gate_verdict import recorded_reruns
    return recorded_reruns(gate_doc)


def compare_tests(recorded: dict | None, new: dict | None, reruns: dict | None = None) -> list:
    """One row per recorded MLX test: reproduced when each build gives the recorded outcome
    again, or, for a test the gate ran again (a pass -> fail it then judged), any outcome
    its recorded reruns on that build gave; a test those reruns showed varying (flaky by
    the gate's rule) is not compared on either build, only required to run."""
    rows = []
    if not isinstance(recorded, dict):
        return rows
    again = {(r["suite"], r["test"]): r for r in (new or {}).get("rows") or []}
    for r in recorded.get("rows") or []:
        n = again.get((r["suite"], r["test"]))
        seen = (reruns or {}).get(f"{r['suite']}:{r['test']}") or {}
        varies = bool(seen) and not confirmed(seen) and n is not None
        problems = []
        for v in GI.VARIANTS:
            was, now = r.get(v), (n or {}).get(v)
            if was != now and now not in (seen.get(v) or ()) and not varies:
                problems.append(f"{v} {was} -> {now}")
        rows.append({"suite": r["suite"], "test": r["test"], "reproduced": not problems, "problems": problems})
    return rows


def main(args, project, say, check) -> int:
    t0 = time.perf_counter()
    files = load_evidence(args.replay, check)
    rec = recorded_gate(files)
    src = _checkout_at(GI.check_source(Path(args.mlx_source), project), rec["commit"])
    drift = _drift(rec["env"], src)
    for line in drift:
        say(("drift (allowed): " if getattr(args, "allow_drift", False) else "not reproduced here: ") + line)
    if drift and not getattr(args, "allow_drift", False):
        print("build_and_test: replay: NOT reproduced: the evidence was recorded elsewhere (the lines above; "
              "--allow-drift rebuilds it anyway)")
        return 1
    try:
        rundir.check_target(args.out, "native-gate", args.replace)
    except rundir.OutDirError as e:
        raise GI.InputError(str(e))
    with tempfile.TemporaryDirectory(prefix="vjpcheck-replay-") as t:
        gate, entries = _prepare(Path(t), files, rec, src, args, project, say)
        state = {}

        def body(tmp):
            ents = GC._entries(entries)
            out = GR._build_and_run(gate, ents, tmp)
            state["doc"] = _replay_document(gate, out, ents, rec, args.replay)
            atomic.write_json(Path(tmp) / REPLAY, state["doc"])
            return out
        outcome = GR.staged_run(gate, args.out, body, "native-gate", args.replace)
    if "failed" in outcome:
        print(f"build_and_test: {outcome['failed']}", file=sys.stderr)
        return 2
    return _report(state["doc"], time.perf_counter() - t0, args.out)


def _drift(recorded_env: dict, src: Path) -> list:
    """The recorded environment's provenance fields that are not this machine's
    (evidence/provenance.py's rule; the subject's version and commit are the checkout's)."""
    from ..evidence import provenance
    here = environment.record(None, mlx_checkout=src)
    return provenance.drift(recorded_env, here)


def _checkout_at(src: Path, commit: str) -> Path:
    """The checkout, which must be at the recorded commit."""
    have = environment.git_commit(src)
    if have != commit:
        raise GI.InputError(f"--mlx-source {src} is at {have or 'no git commit'}, the evidence was recorded on "
                            f"{commit}: check that commit out (git -C {src} checkout {commit}) "
                            "and build it as native/BUILD.md says")
    return src


def _prepare(t: Path, files: dict, rec: dict, src: Path, args, project, say) -> tuple:
    """(the Gate of the recorded patch, stages and filter, the recorded entries), the
    patch and scenarios written to the folder `t`."""
    from ..cases import files as F
    patch = t / "patch.diff"
    patch.write_text(rec["patch"], encoding="utf-8")
    scen_file = t / "scenarios.json"
    scen_file.write_text(rec["scenarios"], encoding="utf-8")
    try:
        entries = recorded_entries(files, F.load_entries(scen_file))
    except F.ScenarioFileError as e:
        raise GI.InputError(f"the evidence's scenarios.json: {e}")
    gate = GI.prepare(src, args.mlx_build, patch, rec["opt"], project, cache=args.cache, jobs=args.jobs,
                      fresh=args.fresh, stages=rec["stages"], mlx_tests_filter=rec["filter"],
                      handoff=recorded_handoff(rec["tests"], say))
    gate.say = say
    gate.hang_s = getattr(args, "hang_timeout", GI.HANG_S)
    if rec["native"].get("archive_sha256") and rec["native"]["archive_sha256"] != nb.sha256_file(gate.archive):
        say("note: this libmlx.a differs from the recorded one (another build of the same commit)")
    say(f"replaying {args.replay}: commit {rec['commit'][:12]}, --opt {rec['opt']}, "
        f"stages {', '.join(rec['stages'])}")
    return gate, entries


def _replay_document(gate, out: dict, ents: list, rec: dict, evidence) -> dict:
    """replay.json: every recorded record and MLX test against the new run's."""
    new = {}
    for v, data in out.get("results", {}).items():
        new[paths.results_for(v)] = data
    for v, data in out.get("native_results", {}).items():
        new[(gate.native_dir + "/" if gate.native_dir else "") + paths.results_for(v)] = data
    passing = {f: {r.get("scenario") for r in (d or {}).get("records") or []
                   if isinstance(r, dict) and r.get("status") == "pass"}
               for f, d in rec["results"].items() if isinstance(d, dict)}
    rows = compare_records(rec["results"], new, measure_again(gate, out, ents, passing))
    tests = compare_tests(rec["tests"], out.get("mlx_tests"), rec["test_reruns"])
    return {"schema": SCHEMA, "evidence": str(evidence), "commit": rec["commit"],
            "records": rows, "mlx_tests": tests,
            "reproduced": all(r["reproduced"] for r in rows + tests)}


def _report(doc: dict, seconds: float, out) -> int:
    print_replay(doc)
    n_rec, n_tests = len(doc["records"]), len(doc["mlx_tests"])
    bad_rec = sum(not r["reproduced"] for r in doc["records"])
    bad_tests = sum(not r["reproduced"] for r in doc["mlx_tests"])
    print(f"build_and_test: replay: {n_rec - bad_rec}/{n_rec} records and {n_tests - bad_tests}/{n_tests} "
          f"MLX tests reproduced ({seconds:.1f} s)  ->  {out}")
    return 0 if doc["reproduced"] else 1


def print_replay(doc: dict) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.console import Console
    c = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    bad = [r for r in doc["records"] if not r["reproduced"]]
    bad_tests = [r for r in doc["mlx_tests"] if not r["reproduced"]]
    if bad:
        t = Table(title="records that did not reproduce")
        for col in ("file", "scenario", "recorded", "replayed", "why"):
            t.add_column(col, overflow="fold")
        for r in bad:
            t.add_row(escape(r["file"]), escape(r["scenario"] or "?"), r["recorded"] or "-", r["replayed"] or "-",
                      escape("; ".join(r["problems"])[:200]))
        c.print(t)
    if bad_tests:
        t = Table(title="MLX tests that did not reproduce")
        for col in ("suite", "test", "why"):
            t.add_column(col, overflow="fold")
        for r in bad_tests:
            t.add_row(r["suite"], escape(r["test"]), escape("; ".join(r["problems"])))
        c.print(t)
    by_file = {}
    for r in doc["records"]:
        f = by_file.setdefault(r["file"], [0, 0])
        f[0] += r["reproduced"]
        f[1] += 1
    varying = {}
    for r in doc["records"]:
        if r["reproduced"] and r.get("varying"):
            varying[r["file"]] = varying.get(r["file"], 0) + 1
    for name, (ok, n) in sorted(by_file.items()):
        c.print(f"{escape(name)}: {ok}/{n} records reproduced"
                + (f" ({varying[name]} of them with values MLX did not repeat in fresh processes: "
                   "nondeterministic here)" if varying.get(name) else ""))
    if doc["mlx_tests"]:
        c.print(f"MLX tests: {len(doc['mlx_tests']) - len(bad_tests)}/{len(doc['mlx_tests'])} reproduced")


def as_json(doc: dict) -> str:
    return json.dumps(doc, indent=1)

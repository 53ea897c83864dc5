"""One gate run end to end: build both variants (build.py), run every stage on both
(suites.py), compare them (compare.py), run again what the patch changed to tell a
change from a flaky one, and write everything into one run directory: every command
with its exit code, time and logs, both builds' results, the comparisons, MLX's own
tests, gate.json and the environment with the checkout as the subject.
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import tempfile
import time
from pathlib import Path

from ..core import jsonio
from ..core.scenario import dump_catalog
from ..evidence import atomic, paths, rundir
from ..judging.gate_verdict import RERUNS, TARGET, regression
from ..native import build as nb
from ..native import suite as native_suite
from ..running import environment
from . import bindings as nbind
from . import cache as native_cache
from . import headers as nheaders
from . import mlxtests
from . import patch as native_patch
from .build import build_variants
from . import touched as ntouched
from .compare import _entries, biting_tags, changed_values, comparison, failing_oracles, mended_checks
from .inputs import MLX_TESTS, VARIANTS, Gate, StepFailed, _say
from .suites import edited_tests, old_tests_on_patched, rerun_test, run_handoff, run_harness, run_native, run_suites


def run(gate: Gate, entries: list, out, replace: bool = False) -> dict:
    """Build, run and record into the run directory `out` (checked by the caller).
    `entries`: scenarios or cases.files.Entry records. Returns {"comparison",
    "native_comparison", "mlx_tests", ...} or {"failed": one line}."""
    return staged_run(gate, out, lambda tmp: _judged(gate, _build_and_run(gate, _entries(entries), tmp)),
                      "native-gate", replace)


def _judged(gate: Gate, outcome: dict) -> dict:
    """gate.json's "verdict": the exit code, the lines and every list behind the printed
    tables (judging/gate_verdict.judge per suite), and "fixes" as given: the evidence keeps
    what the terminal only counts."""
    from .compare import overall_full
    v = overall_full(outcome, gate.fixes)
    outcome["gate"]["fixes"] = gate.fixes
    outcome["gate"]["verdict"] = {"exit": v["exit"], "lines": v["lines"],
                                  "scope": {k: [list(c) for c in x] if k in ("claims", "inferred") else x
                                            for k, x in v["scope"].items()},
                                  "judged": v["judged"]}
    return outcome


def staged_run(gate: Gate, out, body, kind: str = "native-gate", replace: bool = False) -> dict:
    """The run directory around `body(tmp)`: patch, environment, commands and logs are
    always written; body returns {"results"?, "comparison"?, ...} or raises StepFailed."""
    t_start = time.perf_counter()
    out = Path(out)
    side = cf.ThreadPoolExecutor(1)   # the environment record (imports mlx, runs git) meanwhile
    env_f = side.submit(environment.record, None, mlx_checkout=gate.src)
    side.shutdown(wait=False)
    with rundir.staged(out, kind, replace) as tmp, \
            tempfile.TemporaryDirectory(prefix="vjpcheck-gate-") as w:
        tmp = Path(tmp)
        gate.rec, gate.work = nb.Recorder(tmp), Path(w)
        atomic.write_text(tmp / paths.PATCH, gate.patch_text)
        try:
            outcome = body(tmp)
        except (StepFailed, native_cache.CompileFailed) as e:
            outcome = {"failed": str(e).replace("{out}", str(out))}
        env = env_f.result()
        env["native"] = native_environment(gate, time.perf_counter() - t_start)
        atomic.write_json(tmp / paths.ENVIRONMENT, env)
        _write_outcome(gate, tmp, outcome, env)
        gate.rec.save()
        if outcome.get("native_rec") is not None:
            outcome.pop("native_rec").save()
    return outcome


def _write_outcome(gate: Gate, tmp: Path, outcome: dict, env: dict) -> None:
    """Both builds' results (each with the environment), the comparisons, MLX's tests, gate.json."""
    for folder, key in (("", "results"), (gate.native_dir, "native_results")):
        for v, data in outcome.get(key, {}).items():
            data["environment"] = env
            # Compact: these carry every observed array, and indenting them costs ~0.5 s.
            atomic.write_text(tmp / folder / paths.results_for(v), jsonio.dumps(data, sort_keys=True) + "\n")
    docs = (("comparison", paths.COMPARISON), ("native_comparison", Path(gate.native_dir) / paths.COMPARISON),
            ("mlx_tests", MLX_TESTS), ("gate", "gate.json"))
    for key, name in docs:
        if key in outcome:
            atomic.write_json(tmp / name, outcome[key])


def native_environment(gate: Gate, seconds: float) -> dict:
    """The subject: the checkout (commit, mlx/version.h), its build and every flag used."""
    first = gate.first_unit
    return {"opt": gate.opt, "archive": str(gate.archive),
            "archive_sha256": gate.archive_sha256 or nb.sha256_file(gate.archive),
            "libraries": gate.libraries, "units": list(gate.touched),
            "unit_groups": dict(gate.groups),
            "unit_flags": {rel: nb.with_opt(gate.unit(rel).flags, gate.opt) for rel in gate.compiled}
            if (gate.bindings is not None or all(gate.unit_group(r) == "mlx" for r in gate.compiled)) else {},
            "compiler": first.compiler,
            "compiler_version": native_cache.compiler_version(first.compiler).splitlines()[:1],
            "mlx_build": str(gate.build), "mlx_source": str(gate.src), "mlx_checkout_commit": gate.commit,
            "mlx_version_h": environment.checkout_version(gate.src),
            "build_type": nb.read_cache(gate.build).get("CMAKE_BUILD_TYPE"),
            "bindings": _bindings_environment(gate.bindings),
            "stages": list(gate.stages),
            "header_units": nheaders.summary(gate.header_texts, gate.header_units) if gate.header_texts else None,
            "patch_sha256": hashlib.sha256(gate.patch_text.encode()).hexdigest(),
            "patch_series": [{"name": n, "sha256": hashlib.sha256(t.encode()).hexdigest()}
                             for n, t in native_patch.split_combined(gate.patch_text)],
            "handoff_tests": [{"name": Path(t).name, "sha256": nb.sha256_file(Path(t))} for t in gate.handoff],
            "seconds": round(seconds, 3)}


def _bindings_environment(b) -> dict | None:
    """The bindings a build links: their cache key, extension, nanobind and flags per group."""
    if b is None:
        return None
    return {"key": b.key, "extension": b.extension, "nanobind": b.meta.get("nanobind"),
            "python": b.meta.get("python"), "flags_note": b.meta.get("flags_note"),
            "flags": {g: list(next((u.flags for gg, u in b.units.values() if gg == g), ()))
                      for g in nbind.GROUPS}}


def confirm_regressions(gate: Gate, built: dict, comp: dict, scenarios: list, stage: str, native_rec,
                        fails: dict | None = None) -> dict:
    """Every scenario that passes pristine and not patched, and every one of an op outside
    TARGET that passes patched and not pristine (those decide the automatic scope), run
    again RERUNS times on each build in fresh processes: {scenario: {"pristine":
    [statuses], "patched": [...], "confirmed": bool}}. Confirmed when every rerun passes
    or fails as its build did the first time: a change the patch makes comes back every
    time; a hang or a race does not (it is listed as flaky, and neither blamed on the
    patch nor credited to it)."""
    rows = {r["scenario"]: r for r in comp["rows"]
            if regression(fails, r)
            or (r["pristine"] != "pass" and r["patched"] == "pass" and r.get("op") not in TARGET)}
    names = list(rows)
    if not names:
        return {}
    _say(gate, f"{stage}: running the {len(names)} scenarios whose outcome the patch changes again "
               f"(regressions, and fixes outside {', '.join(TARGET)}), {RERUNS} times on each build")
    by = {s.name: s for s in scenarios}
    path = native_suite.write_input([by[n] for n in names if n in by], gate.work / f"rerun-{stage}.json")
    seen = {n: {v: [] for v in VARIANTS} for n in names}
    for k in range(RERUNS):
        for v in VARIANTS:
            cid = f"rerun-{stage}-{v}-{k + 1}"
            run = run_harness(gate, built[v], path, cid) if stage == "harness" else \
                run_native(gate, built[v], path, native_rec, cid)[0]
            got = {r["scenario"]: r.get("status") for r in run.records}
            for n in names:
                seen[n][v].append(got.get(n))
    same = lambda n, v: all((x == "pass") == (rows[n][v] == "pass") for x in seen[n][v])  # noqa: E731
    return {n: dict(d, confirmed=same(n, "pristine") and same(n, "patched")) for n, d in seen.items()}


def mlx_tests_document(results: dict, gate: Gate, built: dict | None = None) -> dict:
    suites, rows = {}, []
    for suite in ("python", "cpp", "handoff"):
        stage = f"mlx-{suite}" if suite != "handoff" else suite
        if (stage, VARIANTS[0]) not in results:
            continue
        per = {v: results[(stage, v)] for v in VARIANTS}
        suites[suite] = {v: {k: r.get(k) for k in ("count", "processes", "mlx") if k in r} for v, r in per.items()}
        rows += mlxtests.compare(suite, per["pristine"]["tests"], per["patched"]["tests"])
    edited = [t for t in edited_tests(gate) if any(r["suite"] == "python" and r["test"] == t for r in rows)]
    if built is not None and edited:
        _say(gate, f"running the old version of the {len(edited)} MLX tests the patch edits on the patched build")
        old = old_tests_on_patched(gate, built, edited)
        for r in rows:
            if r["suite"] == "python" and r["test"] in old:
                r["edited"] = {"old_on_patched": old[r["test"]]}
    reruns = {}
    if built is not None and any(r["change"] == "regression" for r in rows):
        _say(gate, f"running the {sum(r['change'] == 'regression' for r in rows)} MLX tests that pass pristine "
                   f"and not patched again, {mlxtests.RERUNS} times each on each build")
        reruns = mlxtests.confirm(rows, lambda suite, test, v: rerun_test(gate, built, suite, test, v))
    ok, line = mlxtests.verdict(rows, reruns)
    return {"schema": mlxtests.SCHEMA, "filter": gate.mlx_tests_filter, "suites": suites, "rows": rows,
            "passed": ok, "summary": line}, reruns


def _build_and_run(gate: Gate, entries: list, tmp: Path) -> dict:
    t0 = time.perf_counter()
    scenarios = [e.scenario for e in entries]
    input_path = native_suite.write_input(scenarios, gate.work / paths.SCENARIOS)
    # Every run's scenarios, kept (the binaries' input adds the project's tolerance table).
    atomic.write_text(tmp / paths.SCENARIOS, dump_catalog(scenarios) + "\n")
    built = build_variants(gate)
    t_built = time.perf_counter()
    native_rec = None
    if "native" in gate.stages:
        native_rec = nb.Recorder(tmp / gate.native_dir) if gate.native_dir else gate.rec
    results = run_suites(gate, built, input_path, native_rec)
    out = {"native_rec": native_rec if native_rec is not gate.rec else None,
           "gate": _gate_document(gate, built, entries, round(t_built - t0, 3),
                                  round(time.perf_counter() - t_built, 3))}
    if "harness" in gate.stages:
        _harness_stage(gate, built, entries, results, native_rec, out)
    if "native" in gate.stages:
        _native_stage(gate, built, entries, results, native_rec, out)
    if ("sweep", VARIANTS[0]) in results:
        out["gate"]["sweep_reproducers"] = sweep_document(results)
    if "mlx-python" in gate.stages and gate.handoff:
        _say(gate, f"running the patch's {len(gate.handoff)} regression test files on both builds")
        for v in VARIANTS:
            results[("handoff", v)] = run_handoff(gate, built[v])
    if any(s in gate.stages for s in ("mlx-python", "mlx-cpp")):
        out["mlx_tests"], out["gate"]["mlx_test_reruns"] = mlx_tests_document(results, gate, built)
    return out


def sweep_document(results: dict) -> dict:
    """gate.json's "sweep_reproducers": one row per registered sweep reproducer with its
    exit code on each build and the change (gate_verdict.sweep_change)."""
    from ..judging.gate_verdict import sweep_change
    per = {v: results[("sweep", v)]["reproducers"] for v in VARIANTS}
    rows = []
    for name in sorted(set(per["pristine"]) | set(per["patched"])):
        a, b = (per[v].get(name) or {} for v in VARIANTS)
        rows.append({"reproducer": name, "pristine": a.get("exit_code"), "patched": b.get("exit_code"),
                     "change": sweep_change(a.get("exit_code"), b.get("exit_code")),
                     "verdict": {"pristine": a.get("verdict"), "patched": b.get("verdict")}})
    return {"source": "probes/sweep", "rows": rows}


def _gate_document(gate: Gate, built: dict, entries: list, build_s: float, suites_s: float) -> dict:
    """gate.json's start: times, builds, stages, the defect classes that bite on each
    expected defect (conditional tags resolved): all of them, and those the first-order
    oracles show (what the verdict holds a patch to: a scenario once the patch fixes each
    of those classes; compare.overall), and the series' claims."""
    from ..oracles import FIRST_ORDER
    from ..ops import registry
    doc = {"seconds": {"build": build_s, "suites": suites_s},
           "builds": {v: {"reused": b.reused, "parts": {p: str(d) for p, d in b.parts.items()}}
                      for v, b in built.items()},
           "stages": list(gate.stages), "failing": {}, "scenario_reruns": {}, "changed_values": {},
           "partly_fixed": {},
           "inferred": ntouched.infer(gate.touched, registry().values()),
           "defect_tags": biting_tags(entries), "defect_tags_first_order": biting_tags(entries, FIRST_ORDER)}
    if gate.claims is not None:
        doc["claims"] = [list(c) for c in gate.claims]
    return doc


def _harness_stage(gate: Gate, built: dict, entries: list, results: dict, native_rec, out: dict) -> None:
    scenarios = [e.scenario for e in entries]
    runs = {v: results[("harness", v)] for v in VARIANTS}
    out["results"] = {v: native_suite.results_for(scenarios, runs[v], {}, f"gate-{v}", model=False)
                      for v in VARIANTS}
    out["comparison"] = comparison(entries, runs, list(gate.touched))
    fails = out["gate"]["failing"]["harness"] = failing_oracles(runs)
    out["gate"]["changed_values"]["harness"] = changed_values(runs)
    out["gate"]["partly_fixed"]["harness"] = mended_checks(runs)
    out["gate"]["scenario_reruns"]["harness"] = confirm_regressions(
        gate, built, out["comparison"], scenarios, "harness", native_rec, fails)


def _native_stage(gate: Gate, built: dict, entries: list, results: dict, native_rec, out: dict) -> None:
    from ..oracles import FIRST_ORDER
    scenarios = [e.scenario for e in entries]
    runs = {v: results[("native", v)][0] for v in VARIANTS}
    out["native_results"] = {v: native_suite.results_for(scenarios, runs[v], {}, f"native-{v}")
                             for v in VARIANTS}
    comp = comparison(entries, runs, list(gate.touched), FIRST_ORDER)
    comp["fast_path"] = {v: results[("native", v)][1] for v in VARIANTS}
    out["native_comparison"] = comp
    fails = out["gate"]["failing"]["native"] = failing_oracles(runs)
    out["gate"]["changed_values"]["native"] = changed_values(runs)
    out["gate"]["partly_fixed"]["native"] = mended_checks(runs)
    out["gate"]["scenario_reruns"]["native"] = confirm_regressions(
        gate, built, comp, scenarios, "native", native_rec, fails)

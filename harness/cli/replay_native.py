"""The kinds of evidence `mlx-vjpcheck replay` executes again outside the
scenario worker: version matrices, fuzz campaigns by seed, the C++ suite
against the wheel, and native gates (through build_and_test.py --replay).
cli/replay.py dispatches here; each function returns (what, reproduced?, detail)
rows for the trust line."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ..core.errors import UsageError
from ..evidence import paths
from ..evidence.text import visible
from ..running import replay as R


# --- native gate: build_and_test.py --replay ------------------------------------------------------

def gate(args, say) -> int:
    """Rebuild the gate's two builds from the recorded commit and patch and run everything
    again: build_and_test.py --replay itself (cli/gate.py's main, the one code path), given
    the same evidence and options; its exit code is the verdict (2: it refused the evidence)."""
    if not args.mlx_source or not args.mlx_build:
        raise UsageError("native gate evidence is replayed by rebuilding MLX: give --mlx-source (a checkout "
                         "at the recorded commit) and --mlx-build (its static build)")
    from . import gate as gate_cli
    code = gate_cli.main(gate_argv(args))
    verdict = {0: "reproduced", 1: "NOT reproduced"}.get(code, "NOT reproduced (refused, see above)")
    print(visible(f"trust: {verdict}: native gate, by build_and_test.py --replay (see above)  ->  {args.out}"))
    return code


def gate_argv(args) -> list:
    """The build_and_test.py command line that replays this evidence."""
    argv = ["--mlx-source", str(args.mlx_source), "--mlx-build", str(args.mlx_build),
            "--replay", str(args.evidence), "--out", str(args.out)]
    argv += ["--replace"] if args.replace else []
    argv += ["--cache", str(args.cache)] if args.cache else []
    argv += ["--jobs", str(args.jobs)] if args.jobs else []
    argv += ["--allow-drift"] if getattr(args, "allow_drift", False) else []
    return argv


# --- everything else ---------------------------------------------------------------------------------

def versions(files, name: str, args, say) -> tuple:
    """The recorded probes in the recorded releases, each cell's exit code compared."""
    from ..versions import matrix as V
    doc = files.doc(name)
    releases, probe_list, notes = V.replay_plan(doc, args.only)
    for n in notes:
        say(f"versions: {n}")
    if not releases or not probe_list:
        return "versions", False, "nothing could be replayed"
    root = V.cache_root(args.cache_dir)
    say(f"versions: {len(releases)} releases x {len(probe_list)} probes (cache {root})")
    rows = V.run_matrix(V.PipProvider(), releases, probe_list, root, doc.get("device", "cpu"), args.timeout,
                        args.jobs or 2)
    cells = V.compare_cells(doc, rows, probe_list)
    for version, pid, was, now, same in cells:
        say(f"mlx {version} {pid}: recorded {was}, now {now}" + ("" if same else "  NOT reproduced"))
    bad = sum(not c[4] for c in cells)
    left = len(doc["releases"]) - len(releases)   # --only, or not installable as recorded
    ok = not bad and not notes and not left
    return "versions", ok, f"{len(cells) - bad} of {len(cells)} cells reproduced" + (
        f", {len(notes)} not replayable" if notes else "") + (
        f", {left} of {len(doc['releases'])} releases not executed again" if left else "")


CAMPAIGN_RUNS = 3   # at most: a campaign whose MLX outcomes vary is run again to tell which


def campaign(files, fz, args, say) -> tuple:
    """A fuzz campaign: run again from its seeds whenever it ended on its case budget (its
    findings, and that they came from these seeds, are then checked by every replay), else
    the verdict says that part is not reproducible (and --campaign makes that a failure)."""
    what = f"campaign {fz.folder or './'}"
    if not fz.replayable["by_seed"]:   # its findings are replayed one by one; its search cannot be
        if not fz.findings:
            return what, False, (f"found nothing and cannot be run again to the same cases "
                                 f"({fz.replayable['why']}): nothing was executed again")
        if args.campaign:
            return what, False, f"cannot be run again to the same cases: {fz.replayable['why']}"
        return what, True, (f"findings replayed one by one; that this campaign found them and nothing else "
                            f"is not re-checked: it cannot be run again to the same cases ({fz.replayable['why']})")
    camp = files.doc(fz.folder + paths.CAMPAIGN)
    import hypothesis
    if camp["hypothesis"] != hypothesis.__version__:
        return what, False, f"made with hypothesis {camp['hypothesis']}, this is {hypothesis.__version__}"
    return (what, *campaign_verdict({f["signature"] for f in camp["findings"]}, lambda: _rerun(camp, say),
                                    camp["seeds"]))


def campaign_verdict(want: set, rerun, seeds) -> tuple:
    """(reproduced?, detail): the campaign is run again until a run finds exactly the recorded
    signatures, at most CAMPAIGN_RUNS times. It is not reproduced when a signature is found by
    every run but not recorded (a finding left out), or recorded but found by none; runs that
    differ among themselves show MLX outcomes that vary on these cases (nondeterministic)."""
    runs = []
    while len(runs) < CAMPAIGN_RUNS:
        runs.append(rerun())
        if runs[-1] == want:
            return True, f"the same {len(want)} signatures from seeds {seeds}" + \
                (f" (run {len(runs)} of {len(runs)}: earlier runs differed)" if len(runs) > 1 else "")
    extra = sorted(set.intersection(*runs) - want)
    missing = sorted(want - set.union(*runs))
    if extra or missing:
        return False, (f"{len(missing)} recorded signatures found by no run (first {missing[:1]}), {len(extra)} "
                       f"found by every run but not recorded (first {extra[:1]})")
    varying = sorted(set.union(*runs) - set.intersection(*runs))
    return True, (f"nondeterministic here: {len(runs)} runs found different signatures ({len(varying)} vary, "
                  f"e.g. {varying[:1]}); every recorded one was found again, the absence of others is not shown")


def _rerun(camp: dict, say) -> set:
    """The signatures one run of the recorded campaign finds: every seed, the recorded ops,
    dtypes and case budget, no database, time never a factor."""
    from ..fuzz import campaign as C
    from ..fuzz import targets
    unknown = sorted(set(camp["ops"]) - set(targets.names()))
    if unknown:
        raise UsageError(f"the campaign fuzzed ops this package lacks: {', '.join(unknown)}")
    found = set()
    for seed in camp["seeds"]:
        say(f"campaign: seed {seed}, {camp['max_cases']} cases")
        result = C.run_single(camp["ops"], camp["device"], seed, 1e9, camp["max_cases"], "none",
                              dtypes=camp["dtypes"])
        found |= {f.signature for f in result["findings"]}
    return found


def wheel(files, name: str, args, say) -> tuple:
    """The C++ suite against this wheel: built (or reused), the recorded scenarios run again."""
    from ..core.scenario import Scenario
    from ..native import suite as native_suite
    from ..native import wheel as native_wheel
    data = files.doc(name)
    try:
        binary = native_suite.build_wheel(native_wheel.default_build_dir(), say=lambda m: say(f"native: {m}"))
    except native_suite.NativeError as e:
        return f"native {name}", False, f"the suite cannot be built here: {e}"
    scenarios = [Scenario.from_dict(d) for d in data["scenarios"].values()]
    first = _native_run(binary, scenarios)
    bad = 0
    for rec in data["records"]:
        ms = [first.get(rec["scenario"])]
        problems = ["not run again"] if ms[0] is None else R.compare(rec, *ms)
        while problems and ms[0] is not None and len(ms) < R.MEASUREMENTS:
            again = _native_run(binary, [s for s in scenarios if s.name == rec["scenario"]])
            ms.append(again.get(rec["scenario"]))
            problems = R.compare(rec, *[m for m in ms if m is not None])
        if problems:
            bad += 1
            say(f"{rec['scenario']}: NOT reproduced: {'; '.join(problems)[:300]}")
    n = len(data["records"])
    return f"native {name}", not bad, f"{n - bad} of {n} records reproduced"


def _native_run(binary, scenarios: list) -> dict:
    from ..native import suite as native_suite
    with tempfile.TemporaryDirectory(prefix="vjpcheck-replay-") as tmp:
        path = native_suite.write_input(scenarios, Path(tmp) / paths.SCENARIOS)
        run = native_suite.run_binary(binary, path)
    return {r["scenario"]: r for r in run.records}


if __name__ == "__main__":
    from . import options
    sys.exit(options.not_a_program("replay"))

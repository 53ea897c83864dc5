"""build_and_test.py: the native suite against pristine and patched translation units.

Given a checkout and its existing static CMake build: apply the patch to copies
of the touched units, compile each unit pristine and patched with the exact
flags of compile_commands.json (in parallel), link the suite's objects (cached)
and the unit ahead of the static archive twice, run both binaries, and write
every command with its exit code, time and logs, both results files and a
side-by-side table into one run directory.

Exit: 0 pristine reproduces every expected defect and patched passes
everything; 1 otherwise; 2 bad input, a failed compile/link, or a crash.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from . import atomic, environment, native_build as nb, native_cache, native_patch, native_suite, rundir
from .native_build import BuildError, Project

VARIANTS = ("pristine", "patched")
DEFAULT_PATCH = Path(__file__).resolve().parent.parent / "patch" / "gather_vjp_sorted.diff"


class InputError(RuntimeError):
    """Bad input: one line on stderr, exit 2, nothing written."""


class StepFailed(RuntimeError):
    """A compile, link or run went wrong; the run dir is kept as evidence (exit 2)."""


# --- checking the inputs (nothing is written before these pass) ---------------

def check_source(src: Path, project: Project) -> Path:
    if not src.is_dir() or not (src / project.marker).is_file():
        raise InputError(f"--mlx-source {src} is not a checkout of {project.name} "
                         f"(no {project.marker})")
    return src.resolve()


def check_build(build: Path, project: Project) -> Path:
    if not build.is_dir():
        raise InputError(f"--mlx-build {build} is not a directory")
    if not (build / "compile_commands.json").is_file():
        raise InputError(f"--mlx-build {build} lacks compile_commands.json "
                         "(configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)")
    cache = nb.read_cache(build)
    archive = nb.find_archive(build, project)
    if nb.shared_in_cache(cache) or (archive is None and nb.has_shared_library(build, project)):
        raise InputError(f"--mlx-build {build} was built shared (BUILD_SHARED_LIBS=ON); the patched "
                         f"units must be linked ahead of a static {project.archive}: "
                         "reconfigure with -DBUILD_SHARED_LIBS=OFF")
    if archive is None:
        raise InputError(f"--mlx-build {build} lacks {project.archive} (build it first: "
                         f"cmake --build {build})")
    return archive.resolve()


def check_patch(patch: Path, src: Path, all_units: dict) -> tuple:
    """(patch text, {rel: (pristine text, patched text)}) or InputError naming the hunk."""
    try:
        text = patch.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read --patch {patch}: {e.strerror}")
    try:
        files = native_patch.parse(text)
        out = {}
        for fp in files:
            target = src / fp.path
            if not target.is_file():
                raise InputError(f"patch does not apply: {fp.path} does not exist in {src}")
            original = target.read_text(encoding="utf-8")
            out[fp.path] = (original, native_patch.apply(original, fp))
    except native_patch.PatchError as e:
        raise InputError(str(e))
    for rel in out:
        if rel not in all_units:
            raise InputError(f"{rel} is touched by the patch but is not a translation unit in "
                             "compile_commands.json (patches to headers are not supported)")
    return text, out


# --- compiling: suite and pristine objects cached, the patched unit always fresh ---

def _headers(project: Project, src: Path) -> str:
    """The library headers every object here compiles against."""
    return native_cache.tree_digest(src / Path(project.marker).parts[0], "*.h")


def suite_objects(project, unit, headers, ctx) -> list:
    suite = [p for p in sorted(Path(project.suite_include).rglob("*")) if p.is_file()]
    key = "suite-" + native_cache.digest(unit.compiler, list(unit.flags),
                                         native_cache.compiler_version(unit.compiler), headers,
                                         *[p.name.encode() + p.read_bytes() for p in suite],
                                         *[Path(p).read_bytes() for p in project.suite_sources])
    jobs = [native_cache.Job(
        f"compile-suite-{Path(s).stem}", Path(s).stem + ".o",
        lambda obj, s=s: [unit.compiler, *unit.flags, "-I", project.suite_include, "-c", s, "-o", obj],
        unit.directory, f"the native suite ({Path(s).name})") for s in project.suite_sources]
    objs = native_cache.compile_cached(key, jobs, ctx["cache"], ctx["rec"], ctx["jobs"], ctx["fresh"])
    return [objs[j.name] for j in jobs]


def _unit_job(variant, rel, unit, copy, src, opt) -> native_cache.Job:
    # -iquote keeps quoted includes relative to the original file resolving as in the checkout.
    argv = lambda obj: [unit.compiler, *nb.with_opt(unit.flags, opt), "-iquote",  # noqa: E731
                        str((src / rel).parent), "-c", copy, "-o", obj]
    return native_cache.Job(f"compile-{variant}-{_stem(rel)}", _stem(rel) + ".o", argv,
                            unit.directory, f"{variant} {rel}")


def _write_copies(variant, units_text, work) -> dict:
    copies = {}
    for rel, texts in units_text.items():
        copy = work / variant / rel
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(texts[0] if variant == "pristine" else texts[1], encoding="utf-8")
        copies[rel] = copy
    return copies


def pristine_objects(src, units_text, all_units, headers, opt, work, ctx) -> list:
    copies = _write_copies("pristine", units_text, work)
    jobs = [_unit_job("pristine", rel, all_units[rel], copy, src, opt) for rel, copy in copies.items()]
    u = [all_units[rel] for rel in copies]
    key = "pristine-" + native_cache.digest(
        [(x.compiler, nb.with_opt(x.flags, opt), x.directory) for x in u],
        [native_cache.compiler_version(x.compiler) for x in u], headers,
        {rel: units_text[rel][0] for rel in copies}, str(src))
    objs = native_cache.compile_cached(key, jobs, ctx["cache"], ctx["rec"], ctx["jobs"], ctx["fresh"])
    return [objs[j.name] for j in jobs]


def patched_objects(src, units_text, all_units, opt, work, ctx) -> list:
    copies = _write_copies("patched", units_text, work)
    jobs = [_unit_job("patched", rel, all_units[rel], copy, src, opt) for rel, copy in copies.items()]
    (work / "obj").mkdir(exist_ok=True)

    def one(job):
        obj = work / "obj" / job.name
        entry = ctx["rec"].run(job.cid, job.argv(obj), job.cwd)
        if entry["exit_code"] != 0:
            raise native_cache.CompileFailed(job.what, entry)
        return obj
    with cf.ThreadPoolExecutor(ctx["jobs"]) as pool:
        return list(pool.map(one, jobs))


def _stem(rel: str) -> str:
    return rel.replace("/", "_").replace(".", "_")


def link(variant, suite_objs, unit_objs, archive, unit, libs, work, rec) -> Path:
    exe = work / f"vjpcheck-native-{variant}"
    argv = [unit.compiler, *nb.link_passthrough(unit.flags), "-o", exe, *suite_objs, *unit_objs,
            archive, *libs]
    entry = rec.run(f"link-{variant}", argv, work)
    if entry["exit_code"] != 0:
        raise StepFailed(f"linking the {variant} binary failed (exit {entry['exit_code']}): "
                         f"see {{out}}/{entry['stderr']}")
    return exe


def run_variant(variant, exe, input_path, rec, work) -> native_suite.NativeRun:
    count = [0]

    def execute(argv):
        count[0] += 1
        cid = f"run-{variant}" + (f"-{count[0]}" if count[0] > 1 else "")
        e = rec.run(cid, argv, work)
        return (e["exit_code"], (rec.root / e["stdout"]).read_text(encoding="utf-8"),
                (rec.root / e["stderr"]).read_text(encoding="utf-8"))
    try:
        return native_suite.run_binary(exe, input_path, execute=execute)
    except native_suite.NativeError as e:   # dead before any scenario: keep the logs, exit 2
        raise StepFailed(f"the {variant} binary {e}; see {{out}}/logs/run-{variant}"
                         f"{'-' + str(count[0]) if count[0] > 1 else ''}.err")


def comparison(scenarios, runs: dict, units: list) -> dict:
    by = {v: {r["scenario"]: r for r in runs[v].records} for v in VARIANTS}
    rows = []
    for s in scenarios:
        if s.name in by["pristine"] or s.name in by["patched"]:
            rec = by["pristine"].get(s.name) or by["patched"][s.name]
            rows.append({"scenario": s.name, "device": rec["device"],
                         "pristine": (by["pristine"].get(s.name) or {}).get("status"),
                         "patched": (by["patched"].get(s.name) or {}).get("status"),
                         "expects_defect": s.expects_defect})
    skipped = {k["scenario"]: k["reason"] for v in VARIANTS for k in runs[v].skipped}
    return {"units": units, "rows": rows,
            "skipped": [{"scenario": k, "reason": r} for k, r in skipped.items()]}


def verdict(comp: dict) -> tuple:
    """(exit code, one line)."""
    rows = comp["rows"]
    crashed = [f"{v} {r['scenario']}" for r in rows for v in VARIANTS if r[v] == "crashed"]
    if crashed:
        return 2, f"native binary crashed ({len(crashed)}x, first: {crashed[0]}); recorded as crashed"
    missed = [r["scenario"] for r in rows if r["expects_defect"] and r["pristine"] == "pass"]
    unfixed = [r["scenario"] for r in rows if r["patched"] != "pass"]
    expected = sum(r["expects_defect"] for r in rows)
    if not rows:
        return 1, "no scenario ran"
    if missed or unfixed:
        return 1, (f"pristine reproduced {expected - len(missed)}/{expected} expected defects; "
                   f"patched: {len(unfixed)} of {len(rows)} scenarios not passing"
                   + (f" (first: {unfixed[0]})" if unfixed else ""))
    return 0, (f"pristine reproduced {expected}/{expected} expected defects "
               f"({sum(r['pristine'] != 'pass' for r in rows)} scenarios not passing); "
               f"patched passes all {len(rows)}")


def validate(src, build, patch=DEFAULT_PATCH, out="artifacts/native", opt="as-built",
             project: Project = nb.MLX, scenarios=None, cache=None, jobs=None, fresh=False) -> int:
    t_start = time.perf_counter()
    src, build, patch, out = Path(src), Path(build), Path(patch), Path(out)
    src = check_source(src, project)
    archive = check_build(build, project)
    all_units = nb.units(build, src)
    patch_text, units_text = check_patch(patch, src, all_units)
    try:
        rundir.check_target(out)
    except rundir.OutDirError as e:
        raise InputError(str(e))
    if scenarios is None:
        from . import catalog
        scenarios = catalog.catalog()
    jobs = jobs or os.cpu_count() or 2
    first = all_units[next(iter(units_text))]
    libs = nb.archive_libraries(nb.read_cache(build))
    print(f"patch touches: {', '.join(units_text)}", flush=True)
    outcome = {}
    side = cf.ThreadPoolExecutor(1)   # the environment record (imports mlx, runs git) meanwhile
    env_f = side.submit(environment.record, None, mlx_checkout=src)
    side.shutdown(wait=False)
    with rundir.staged(out) as tmp, tempfile.TemporaryDirectory(prefix="vjpcheck-native-") as w:
        tmp, work = Path(tmp), Path(w)
        rec = nb.Recorder(tmp)
        atomic.write_text(tmp / "patch.diff", patch_text)
        ctx = {"rec": rec, "jobs": jobs, "fresh": fresh,
               "cache": Path(cache) if cache else native_cache.default_root()}
        try:
            outcome = _build_and_run(project, src, first, units_text, all_units, archive, libs,
                                     work, opt, scenarios, tmp, ctx)
        except (StepFailed, native_cache.CompileFailed) as e:
            outcome = {"failed": str(e).replace("{out}", str(out))}
        env = env_f.result()
        env["native"] = {"opt": opt, "archive": str(archive), "archive_sha256": nb.sha256_file(archive),
                         "libraries": libs, "units": list(units_text), "compiler": first.compiler,
                         "compiler_version": native_cache.compiler_version(first.compiler).splitlines()[:1],
                         "patch_sha256": hashlib.sha256(patch_text.encode()).hexdigest(),
                         "seconds": round(time.perf_counter() - t_start, 3)}
        atomic.write_json(tmp / "environment.json", env)
        for v, data in outcome.get("results", {}).items():
            data["environment"] = env
            # Compact: these carry every observed array, and indenting them costs ~0.5 s.
            atomic.write_text(tmp / f"results-{v}.json",
                              json.dumps(data, sort_keys=True, allow_nan=True) + "\n")
        if "comparison" in outcome:
            atomic.write_json(tmp / "comparison.json", outcome["comparison"])
        rec.save()
    if "failed" in outcome:
        print(f"build_and_test: {outcome['failed']}", file=sys.stderr)
        return 2
    from . import native_report
    native_report.print_table(outcome["comparison"], out)
    code, line = verdict(outcome["comparison"])
    print(f"build_and_test: {line}  ({time.perf_counter() - t_start:.1f} s)  ->  {out}",
          file=sys.stderr if code == 2 else sys.stdout)
    return code


def _build_and_run(project, src, first, units_text, all_units, archive, libs, work, opt,
                   scenarios, tmp, ctx) -> dict:
    rec = ctx["rec"]
    input_path = native_suite.write_input(scenarios, work / "scenarios.json")
    shutil.copyfile(input_path, tmp / "scenarios.json")   # the binaries' exact input, kept
    headers = _headers(project, src)

    def pipeline(variant):   # objects -> link -> run; pristine usually starts from the cache
        if variant == "pristine":
            objs = pristine_objects(src, units_text, all_units, headers, opt, work, ctx)
        else:
            objs = patched_objects(src, units_text, all_units, opt, work, ctx)
        exe = link(variant, suite_f.result(), objs, archive, first, libs, work, rec)
        return run_variant(variant, exe, input_path, rec, work)

    with cf.ThreadPoolExecutor(3) as pool:
        suite_f = pool.submit(suite_objects, project, first, headers, ctx)
        futures = {v: pool.submit(pipeline, v) for v in VARIANTS}
        runs = {v: f.result() for v, f in futures.items()}
    results = {v: native_suite.results_for(scenarios, runs[v], {}, f"native-{v}") for v in VARIANTS}
    return {"results": results, "comparison": comparison(scenarios, runs, list(units_text))}


# --- command line ------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="build_and_test.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--mlx-source", required=True, metavar="DIR", help="an MLX git checkout")
    p.add_argument("--mlx-build", required=True, metavar="DIR",
                   help="its existing static CMake build (compile_commands.json, libmlx.a)")
    p.add_argument("--patch", default=str(DEFAULT_PATCH), metavar="FILE",
                   help="unified diff against the checkout (default: patch/gather_vjp_sorted.diff)")
    p.add_argument("--out", default="artifacts/native", metavar="DIR", help="run directory")
    p.add_argument("--opt", choices=("as-built", "O0"), default="as-built",
                   help="compile the touched units with the recorded flags, or at -O0")
    p.add_argument("--cache", metavar="DIR",
                   help="cache of the suite's and the pristine units' objects "
                        "(default: $MLX_VJPCHECK_CACHE or ~/.cache/mlx-vjpcheck/native-objects)")
    p.add_argument("--fresh", action="store_true",
                   help="recompile everything, refreshing the cache")
    p.add_argument("--jobs", type=int, metavar="N", help="parallel compiles (default: CPU count)")
    return p


def main(argv=None, project: Project = nb.MLX, scenarios=None) -> int:
    """The command line; `project` and `scenarios` let the tests drive a fixture library."""
    args = parser().parse_args(argv)
    try:
        return validate(args.mlx_source, args.mlx_build, args.patch, args.out, args.opt,
                        project=project, scenarios=scenarios, cache=args.cache, jobs=args.jobs,
                        fresh=args.fresh)
    except (InputError, BuildError, native_suite.NativeError) as e:
        print(f"build_and_test: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("build_and_test: interrupted", file=sys.stderr)
        return 2

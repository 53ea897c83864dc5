"""The native gate: the C++ suite against pristine and patched translation units.

Given a checkout and its existing static CMake build: apply the patch to copies
of the touched units, compile each unit pristine and patched with the exact
flags of compile_commands.json (in parallel), link the suite's objects (cached)
and the units ahead of the static archive twice, run both binaries, and write
every command with its exit code, time and logs, both results files and a
side-by-side table into one run directory. build_and_test.py drives it
(harness/cli/gate.py).

Every input is checked by `prepare` before anything is written.
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..core import jsonio, resources
from ..evidence import atomic, paths, rundir
from ..running import environment
from . import build as nb
from . import cache as native_cache
from . import patch as native_patch
from . import suite as native_suite
from .build import Project, Unit

VARIANTS = ("pristine", "patched")
DEFAULT_PATCH = resources.patch_dir() / "gather_vjp_sorted.diff"


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
            why = ("patches to headers are not supported" if rel.endswith((".h", ".hpp", ".hh", ".inl"))
                   else "this build does not compile it: is it switched off in its CMake configuration?")
            raise InputError(f"{rel} is touched by the patch but is not a translation unit in "
                             f"compile_commands.json ({why})")
    return text, out


# --- compiling: suite and pristine objects cached, the patched unit always fresh ---

def _headers(project: Project, src: Path) -> str:
    """The library headers every object here compiles against."""
    return native_cache.tree_digest(src / Path(project.marker).parts[0], "*.h")


@dataclass
class Gate:
    """One gate run: its checked inputs, and what the build steps share."""
    project: Project
    src: Path                 # the checkout (resolved)
    archive: Path             # its static library
    units: dict               # rel path -> build.Unit, every unit of compile_commands.json
    touched: dict             # rel path -> (pristine text, patched text)
    patch_text: str
    libraries: list           # what the archive links against, from CMakeCache.txt
    opt: str                  # "as-built" or "O0"
    jobs: int                 # parallel compiles
    cache: Path               # object cache root
    fresh: bool               # recompile instead of reusing cached objects
    rec: nb.Recorder | None = None   # set once the run directory exists
    work: Path | None = None         # scratch directory of this run
    headers: str = ""                # digest of the library's headers

    @property
    def first(self) -> Unit:
        """The first touched unit: its compiler and flags build and link the suite."""
        return self.units[next(iter(self.touched))]


def prepare(src, build, patch=DEFAULT_PATCH, opt="as-built", project: Project = nb.MLX,
            cache=None, jobs=None, fresh=False) -> Gate:
    """Check every input (raises InputError or BuildError); nothing is written."""
    src = check_source(Path(src), project)
    build = Path(build)
    archive = check_build(build, project)
    units = nb.units(build, src)
    patch_text, touched = check_patch(Path(patch), src, units)
    return Gate(project, src, archive, units, touched, patch_text,
                nb.archive_libraries(nb.read_cache(build)), opt, jobs or os.cpu_count() or 2,
                Path(cache) if cache else native_cache.default_root(), fresh)


def suite_objects(gate: Gate) -> list:
    project, unit = gate.project, gate.first
    suite = [p for p in sorted(Path(project.suite_include).rglob("*")) if p.is_file()]
    key = "suite-" + native_cache.digest(unit.compiler, list(unit.flags),
                                         native_cache.compiler_version(unit.compiler), gate.headers,
                                         *[p.name.encode() + p.read_bytes() for p in suite],
                                         *[Path(p).read_bytes() for p in project.suite_sources])
    jobs = [native_cache.Job(
        f"compile-suite-{Path(s).stem}", Path(s).stem + ".o",
        lambda obj, s=s: [unit.compiler, *unit.flags, "-I", project.suite_include, "-c", s, "-o", obj],
        unit.directory, f"the native suite ({Path(s).name})") for s in project.suite_sources]
    objs = native_cache.compile_cached(key, jobs, gate.cache, gate.rec, gate.jobs, gate.fresh)
    return [objs[j.name] for j in jobs]


def _unit_job(variant, rel, unit, copy, src, opt) -> native_cache.Job:
    # -iquote keeps quoted includes relative to the original file resolving as in the checkout.
    argv = lambda obj: [unit.compiler, *nb.with_opt(unit.flags, opt), "-iquote",  # noqa: E731
                        str((src / rel).parent), "-c", copy, "-o", obj]
    return native_cache.Job(f"compile-{variant}-{_stem(rel)}", _stem(rel) + ".o", argv,
                            unit.directory, f"{variant} {rel}")


def _write_copies(variant, gate: Gate) -> dict:
    copies = {}
    for rel, texts in gate.touched.items():
        copy = gate.work / variant / rel
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(texts[0] if variant == "pristine" else texts[1], encoding="utf-8")
        copies[rel] = copy
    return copies


def pristine_objects(gate: Gate) -> list:
    copies = _write_copies("pristine", gate)
    jobs = [_unit_job("pristine", rel, gate.units[rel], copy, gate.src, gate.opt)
            for rel, copy in copies.items()]
    u = [gate.units[rel] for rel in copies]
    key = "pristine-" + native_cache.digest(
        [(x.compiler, nb.with_opt(x.flags, gate.opt), x.directory) for x in u],
        [native_cache.compiler_version(x.compiler) for x in u], gate.headers,
        {rel: gate.touched[rel][0] for rel in copies}, str(gate.src))
    objs = native_cache.compile_cached(key, jobs, gate.cache, gate.rec, gate.jobs, gate.fresh)
    return [objs[j.name] for j in jobs]


def patched_objects(gate: Gate) -> list:
    copies = _write_copies("patched", gate)
    jobs = [_unit_job("patched", rel, gate.units[rel], copy, gate.src, gate.opt)
            for rel, copy in copies.items()]
    (gate.work / "obj").mkdir(exist_ok=True)

    def one(job):
        obj = gate.work / "obj" / job.name
        entry = gate.rec.run(job.cid, job.argv(obj), job.cwd)
        if entry["exit_code"] != 0:
            raise native_cache.CompileFailed(job.what, entry)
        return obj
    with cf.ThreadPoolExecutor(gate.jobs) as pool:
        return list(pool.map(one, jobs))


def _stem(rel: str) -> str:
    return rel.replace("/", "_").replace(".", "_")


def link(gate: Gate, variant, suite_objs, unit_objs) -> Path:
    exe = gate.work / f"vjpcheck-native-{variant}"
    unit = gate.first
    argv = [unit.compiler, *nb.link_passthrough(unit.flags), "-o", exe, *suite_objs, *unit_objs,
            gate.archive, *gate.libraries]
    entry = gate.rec.run(f"link-{variant}", argv, gate.work)
    if entry["exit_code"] != 0:
        raise StepFailed(f"linking the {variant} binary failed (exit {entry['exit_code']}): "
                         f"see {{out}}/{entry['stderr']}")
    return exe


def run_variant(gate: Gate, variant, exe, input_path) -> native_suite.NativeRun:
    count, rec = [0], gate.rec

    def execute(argv):
        count[0] += 1
        cid = f"run-{variant}" + (f"-{count[0]}" if count[0] > 1 else "")
        e = rec.run(cid, argv, gate.work)
        return (e["exit_code"], (rec.root / e["stdout"]).read_text(encoding="utf-8"),
                (rec.root / e["stderr"]).read_text(encoding="utf-8"))
    try:
        return native_suite.run_binary(exe, input_path, execute=execute)
    except native_suite.NativeError as e:   # dead before any scenario: keep the logs, exit 2
        raise StepFailed(f"the {variant} binary {e}; see {{out}}/logs/run-{variant}"
                         f"{'-' + str(count[0]) if count[0] > 1 else ''}.err")


def _entries(items) -> list:
    """Scenarios or cases.files.Entry records (a bare scenario is a catalog entry)."""
    from ..cases import files
    return [e if isinstance(e, files.Entry) else files.Entry(e, "catalog", "catalog", e.expects_defect)
            for e in items]


def comparison(entries, runs: dict, units: list) -> dict:
    """One row per scenario either binary ran. `expects_defect` says a pristine build is
    expected not to pass it, `in_scope` that the patch is meant to make it pass; rows out
    of scope carry the reason and take no part in the verdict."""
    by = {v: {r["scenario"]: r for r in runs[v].records} for v in VARIANTS}
    rows = []
    for e in _entries(entries):
        s = e.scenario
        if s.name in by["pristine"] or s.name in by["patched"]:
            rec = by["pristine"].get(s.name) or by["patched"][s.name]
            row = {"scenario": s.name, "device": rec["device"],
                   "pristine": (by["pristine"].get(s.name) or {}).get("status"),
                   "patched": (by["patched"].get(s.name) or {}).get("status"),
                   "expects_defect": e.expects_defect, "source": e.kind, "in_scope": e.in_scope}
            if e.kind == "regression":
                row["signature"] = e.meta.get("signature")
                row["recorded_pristine"] = e.meta["pristine"]["status"]
            if not e.in_scope:
                row["reason"] = e.reason
            rows.append(row)
    skipped = {k["scenario"]: k["reason"] for v in VARIANTS for k in runs[v].skipped}
    return {"units": units, "rows": rows,
            "skipped": [{"scenario": k, "reason": r} for k, r in skipped.items()]}


def verdict(comp: dict) -> tuple:
    """(exit code, one line). In scope: every expected defect reproduces on pristine (a
    crash counts) and patched passes. A crash nobody expected is exit 2."""
    rows = comp["rows"]
    scoped = [r for r in rows if r.get("in_scope", True)]
    # A crash is exit 2 unless it is the defect itself: a corpus entry whose recorded
    # pristine status is "crashed", crashing the pristine binary again.
    crashed = [f"{v} {r['scenario']}" for r in rows for v in VARIANTS if r[v] == "crashed"
               and not (v == "pristine" and r.get("recorded_pristine") == "crashed")]
    if crashed:
        return 2, f"native binary crashed ({len(crashed)}x, first: {crashed[0]}); recorded as crashed"
    missed = [r["scenario"] for r in scoped if r["expects_defect"] and r["pristine"] == "pass"]
    unfixed = [r["scenario"] for r in scoped if r["patched"] != "pass"]
    expected = sum(r["expects_defect"] for r in scoped)
    corpus = [r for r in scoped if r.get("source") == "regression"]
    out = len(rows) - len(scoped)
    tail = (f"; {len(corpus)} of them from the regression corpus" if corpus else "") + \
           (f"; {out} out of scope (listed with their reasons)" if out else "")
    if not scoped:
        return 1, "no scenario ran" + tail
    fp = comp.get("fast_path") or {}
    lost = sorted(op for op, on in (fp.get("pristine") or {}).items()
                  if on and (fp.get("patched") or {}).get(op) is False)
    if lost:
        return 1, (f"the patched units no longer take the right-sorted segmented fast path "
                   f"({', '.join(lost)}): MoE backward passes would lose it")
    if missed or unfixed:
        return 1, (f"pristine reproduced {expected - len(missed)}/{expected} expected defects"
                   + (f" (first missed: {missed[0]})" if missed else "")
                   + f"; patched: {len(unfixed)} of {len(scoped)} scenarios not passing"
                   + (f" (first: {unfixed[0]})" if unfixed else "") + tail)
    return 0, (f"pristine reproduced {expected}/{expected} expected defects "
               f"({sum(r['pristine'] != 'pass' for r in scoped)} scenarios not passing); "
               f"patched passes all {len(scoped)}" + tail)


def run(gate: Gate, entries: list, out, replace: bool = False) -> dict:
    """Build, run and record into the run directory `out` (checked by the caller).
    `entries`: scenarios or cases.files.Entry records.
    Returns {"results", "comparison"} or {"failed": one line}."""
    return staged_run(gate, out, lambda tmp: _build_and_run(gate, _entries(entries), tmp),
                      "native-gate", replace)


def staged_run(gate: Gate, out, body, kind: str = "native-gate", replace: bool = False) -> dict:
    """The run directory around `body(tmp)`: patch, environment, commands and logs are
    always written; body returns {"results"?, "comparison"?, ...} or raises StepFailed."""
    t_start = time.perf_counter()
    out = Path(out)
    side = cf.ThreadPoolExecutor(1)   # the environment record (imports mlx, runs git) meanwhile
    env_f = side.submit(environment.record, None, mlx_checkout=gate.src)
    side.shutdown(wait=False)
    with rundir.staged(out, kind, replace) as tmp, \
            tempfile.TemporaryDirectory(prefix="vjpcheck-native-") as w:
        tmp = Path(tmp)
        gate.rec, gate.work = nb.Recorder(tmp), Path(w)
        atomic.write_text(tmp / paths.PATCH, gate.patch_text)
        try:
            outcome = body(tmp)
        except (StepFailed, native_cache.CompileFailed) as e:
            outcome = {"failed": str(e).replace("{out}", str(out))}
        env = env_f.result()
        env["native"] = _native_environment(gate, time.perf_counter() - t_start)
        atomic.write_json(tmp / paths.ENVIRONMENT, env)
        for v, data in outcome.get("results", {}).items():
            data["environment"] = env
            # Compact: these carry every observed array, and indenting them costs ~0.5 s.
            atomic.write_text(tmp / paths.results_for(v), jsonio.dumps(data, sort_keys=True) + "\n")
        if "comparison" in outcome:
            atomic.write_json(tmp / paths.COMPARISON, outcome["comparison"])
        gate.rec.save()
    return outcome


def _native_environment(gate: Gate, seconds: float) -> dict:
    compiler = gate.first.compiler
    return {"opt": gate.opt, "archive": str(gate.archive), "archive_sha256": nb.sha256_file(gate.archive),
            "libraries": gate.libraries, "units": list(gate.touched), "compiler": compiler,
            "compiler_version": native_cache.compiler_version(compiler).splitlines()[:1],
            "patch_sha256": hashlib.sha256(gate.patch_text.encode()).hexdigest(),
            "seconds": round(seconds, 3)}


def build_binaries(gate: Gate, then=None) -> dict:
    """{variant: binary}: suite objects, pristine and patched unit objects, two links, in
    parallel. `then(variant, exe)` runs in the variant's pipeline right after its link
    (the gate runs the binary there); its results come back as {variant: (exe, result)}."""
    gate.headers = _headers(gate.project, gate.src)

    def pipeline(variant):   # objects -> link -> then; pristine usually starts from the cache
        objs = pristine_objects(gate) if variant == "pristine" else patched_objects(gate)
        exe = link(gate, variant, suite_f.result(), objs)
        return exe, (then(variant, exe) if then else None)

    with cf.ThreadPoolExecutor(3) as pool:
        suite_f = pool.submit(suite_objects, gate)
        futures = {v: pool.submit(pipeline, v) for v in VARIANTS}
        return {v: f.result() for v, f in futures.items()}


def fast_path(gate: Gate, variant, exe) -> dict | None:
    """{op: bool}: does a right-sorted, non-broadcast VJP (the MoE case) still go through
    the segmented matmul? None when the binary has no such probe (a fixture's suite)."""
    e = gate.rec.run(f"fastpath-{variant}", [exe, "--fast-path"], gate.work)
    if e["exit_code"] != 0:
        return None
    for line in (gate.rec.root / e["stdout"]).read_text(encoding="utf-8").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and isinstance(msg.get("fast_path"), dict):
            return {str(k): bool(v) for k, v in msg["fast_path"].items()}
    return None


def _build_and_run(gate: Gate, entries: list, tmp: Path) -> dict:
    scenarios = [e.scenario for e in entries]
    input_path = native_suite.write_input(scenarios, gate.work / paths.SCENARIOS)
    shutil.copyfile(input_path, tmp / paths.SCENARIOS)   # the binaries' exact input, kept
    built = build_binaries(gate, lambda v, exe: (run_variant(gate, v, exe, input_path),
                                                 fast_path(gate, v, exe)))
    runs = {v: r for v, (_, (r, _)) in built.items()}
    results = {v: native_suite.results_for(scenarios, runs[v], {}, f"native-{v}") for v in VARIANTS}
    comp = comparison(entries, runs, list(gate.touched))
    comp["fast_path"] = {v: fp for v, (_, (_, fp)) in built.items()}
    return {"results": results, "comparison": comp}

"""The gate: a patch to MLX's translation units, pristine against patched, through
everything this project checks.

Given a checkout and its existing static CMake build (`--mlx-build`): apply the
patch to copies of the touched files, compile each touched unit pristine and
patched with its exact flags (cached per unit and text), and link two builds
ahead of `libmlx.a` (variants.py), each made of MLX's Python package (the
bindings objects are compiled once per checkout: bindings.py), MLX's C++ test
binary and this project's C++ suite. Then run, on both builds, side by side:

* harness: every scenario of every op (catalog, regression corpus, --scenarios)
  through the ordinary scenario worker with the built package first on
  PYTHONPATH (so every oracle of the "run" context applies and the records are
  ordinary results records);
* native: the C++ suite (gather_mm / gather_qmm: the defect report's native
  checks: loss before and after a step, gradients, finite differences, Hessian
  rows) and whether the right-sorted fast path is still taken;
* mlx-python, mlx-cpp: MLX's own Python (unittest) and C++ (doctest) tests
  (mlxtests.py), one outcome per test.

Everything lands in one run directory: every command with its exit code, time
and logs, the results of both builds, the comparisons and the environment with
the checkout's commit, version and flags as the subject. build_and_test.py
drives it (harness/cli/gate.py). Every input is checked by `prepare` before
anything is written or compiled.
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core import jsonio, resources
from ..core.scenario import dump_catalog
from ..evidence import atomic, paths, rundir
from ..judging.gate_rules import (HELD, RERUNS, TARGET, _held, changed_ops, confirmed_scenario,  # noqa: F401
                                  failing, judge, regression, resolve_scope, worse)
from ..running import environment
from . import bindings as nbind
from . import build as nb
from . import cache as native_cache
from . import headers as nheaders
from . import mlxtests
from . import patch as native_patch
from . import suite as native_suite
from . import variants as nvar
from .build import Project, Unit

VARIANTS = ("pristine", "patched")
# patch/series (the diffs in order) when it exists, else the one diff.
DEFAULT_PATCH = (resources.patch_dir() / "series" if (resources.patch_dir() / "series").is_file()
                 else resources.patch_dir() / "gather_vjp_sorted.diff")
# The ops this project's own patch is about: a patch that changes the outcome of any of
# their scenarios is held to fixing every known defect of all of them.
STAGES = ("harness", "native", "mlx-python", "mlx-cpp")
BINDING_STAGES = ("harness", "mlx-python", "mlx-cpp")
NATIVE_DIR = "native"                 # the C++ suite's results, comparison and commands
MLX_TESTS = "mlx-tests.json"
HEADER_SUFFIXES = nheaders.HEADER_SUFFIXES
PKG = __name__.split(".")[0]          # mlx_vjpcheck installed, harness from a checkout
# A scenario or an MLX test that gives no sign of progress for this long is killed as hung
# (recorded like a crash: the run resumes at the next one). build_and_test.py --hang-timeout.
HANG_S = 300.0
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


class InputError(RuntimeError):
    """Bad input: one line on stderr, exit 2, nothing written."""


StepFailed = nb.StepFailed   # a compile, link or run went wrong; the run dir is kept (exit 2)


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


def classify(rel: str, all_units: dict, with_bindings: bool) -> str:
    """What a touched file is: "mlx" (a unit of libmlx), "header" (its includers are
    recompiled: headers.py), "core" (a bindings unit, python/src), "tests" (a C++ test
    unit), "python" (a source of the Python package), "mlx-tests" (a file of MLX's Python
    tests); anything else is refused with one line naming the file."""
    if rel in all_units:
        return "mlx"
    if rel.endswith(HEADER_SUFFIXES):
        return "header"   # every unit including it is recompiled patched (headers.py)
    if with_bindings and rel.startswith("python/src/") and rel.endswith((".cpp", ".cc")):
        return "core"
    if with_bindings and rel.startswith("tests/") and rel.endswith((".cpp", ".cc")):
        return "tests"
    if rel.startswith("python/tests/") and rel.endswith(".py"):
        # MLX's Python tests: pristine runs the old file, patched the new. Nothing is
        # compiled from them, so a run without those tests (--native-only, the speed
        # benchmark) takes the series as it is and leaves them aside.
        return "mlx-tests"
    if with_bindings and rel.startswith("python/mlx/") and rel.endswith(".py"):
        return "python"
    raise InputError(f"{rel} is touched by the patch but is not a translation unit in "
                     "compile_commands.json" + (", a bindings or C++ test unit, or a source of the "
                                                "Python package (python/mlx)" if with_bindings else "")
                     + " (is it switched off in its CMake configuration?)")


def check_patch(patch: Path, src: Path, all_units: dict, with_bindings: bool = False) -> tuple:
    """(patch text, {rel: (pristine text, patched text)}, {rel: group}) or InputError
    naming the hunk or the file. `patch` is one diff or a series file (patch/series: diffs
    applied in order; the text is then their combination, native_patch.read)."""
    def original(rel):
        target = src / rel
        if not target.is_file():
            raise native_patch.PatchError(f"patch does not apply: {rel} does not exist in {src}")
        return target.read_text(encoding="utf-8")
    try:
        text, parts = native_patch.read(patch)
        out = native_patch.apply_all(parts, original)
    except native_patch.PatchError as e:
        raise InputError(str(e))
    groups = {rel: classify(rel, all_units, with_bindings) for rel in out}
    return text, out, groups


def check_headers(build: Path, src: Path, units: dict, groups: dict, with_bindings: bool) -> dict:
    """{libmlx unit: its headers} from the build's dependency files, when the patch touches a
    header; InputError naming a touched header the gate cannot apply: one the build turns
    into a generated source, or one no unit of this build includes (another backend's)."""
    touched = [r for r, g in groups.items() if g == "header"]
    if not touched:
        return {}
    for rel, made in nheaders.generated_inputs(build, src).items():
        if rel in touched:
            raise InputError(f"the patch touches the header {rel}, from which the build generates {made}: "
                             "the gate does not regenerate it; rebuild MLX with the change")
    deps = nheaders.from_build(build, src)
    complete = all(u in deps for u in units)
    for rel in touched:
        bindings_side = with_bindings and rel.startswith(("python/src/", "tests/"))
        if complete and not bindings_side and not nheaders.includers([rel], deps):
            raise InputError(f"the patch touches the header {rel}, which no translation unit of "
                             f"--mlx-build {build} includes (a header of another backend?)")
    return deps


def _headers(project: Project, src: Path) -> str:
    """The library headers every object here compiles against."""
    return native_cache.tree_digest(src / Path(project.marker).parts[0], "*.h")


@dataclass
class Gate:
    """One gate run: its checked inputs, and what the build steps share."""
    project: Project
    src: Path                 # the checkout (resolved)
    build: Path               # its static build
    archive: Path             # its static library
    units: dict               # rel path -> build.Unit, every unit of compile_commands.json
    touched: dict             # rel path -> (pristine text, patched text)
    groups: dict              # rel path -> "mlx" | "core" | "tests" | "python"
    patch_text: str
    libraries: list           # what the archive links against, from CMakeCache.txt
    opt: str                  # "as-built" or "O0"
    jobs: int                 # parallel compiles and suites
    cache_root: Path          # everything compiled or linked is cached under it
    fresh: bool               # recompile instead of reusing cached objects
    stages: tuple = STAGES
    mlx_tests_filter: str | None = None
    commit: str | None = None
    prerequisites: dict = field(default_factory=dict)
    rec: nb.Recorder | None = None   # set once the run directory exists
    work: Path | None = None         # scratch directory of this run
    headers: str = ""                # digest of the library's headers
    archive_sha256: str = ""
    bindings: nbind.Bindings | None = None
    say: object = None
    hang_s: float = HANG_S
    claims: list | None = None       # [(op, class)] the series' manifest says it fixes
    build_deps: dict = field(default_factory=dict)   # libmlx unit -> headers (the build's dep files)
    header_units: dict = field(default_factory=dict)  # unit including a touched header -> group
    # The patch's own regression tests (patch/tests, named per diff by series.json), run on
    # both builds beside MLX's Python tests: each file must fail pristine and pass patched.
    handoff: list = field(default_factory=list)

    @property
    def header_texts(self) -> dict:
        """The touched headers' patched texts (the overlay of every patched compile)."""
        return {r: t[1] for r, t in self.touched.items() if self.groups.get(r) == "header"}

    @property
    def cache(self) -> Path:
        """Object cache entries (suite, units)."""
        return self.cache_root / "native-objects"

    @property
    def builds_root(self) -> Path:
        return self.cache_root / nvar.BUILDS

    def unit_group(self, rel: str) -> str:
        return self.groups.get(rel) or self.header_units.get(rel, "mlx")

    def unit(self, rel: str) -> Unit:
        if rel in self.units:
            return self.units[rel]
        u = self.bindings.unit(rel) if self.bindings is not None else None
        if u is None:
            raise StepFailed(f"{rel} is touched by the patch but the bindings' configure does not "
                             "compile it")
        return u

    @property
    def first_unit(self) -> Unit:
        """The compiler and flags that build and link the suite: the first touched unit of
        libmlx, else any unit of the build."""
        rel = next((r for r in self.touched if self.unit_group(r) == "mlx"), None)
        return self.units[rel] if rel else next(iter(self.units.values()))

    first = first_unit   # the older name

    @property
    def compiled(self) -> list:
        """The touched files that are translation units (compiled pristine and patched)."""
        return [r for r in self.touched if self.unit_group(r) in ("mlx", "core", "tests")]

    @property
    def native_dir(self) -> str:
        """Where the C++ suite's results go: native/ beside the harness's, or the top of
        the run directory when it is the only suite (--native-only, no bindings)."""
        return NATIVE_DIR if "harness" in self.stages else ""

    @property
    def needs_bindings(self) -> bool:
        return any(s in BINDING_STAGES for s in self.stages)


def prepare(src, build, patch=DEFAULT_PATCH, opt="as-built", project: Project = nb.MLX,
            cache=None, jobs=None, fresh=False, stages=None, mlx_tests_filter=None, handoff=None) -> Gate:
    """Check every input (raises InputError or BuildError); nothing is written. `handoff`:
    the regression test files to run on both builds (default: those series.json beside
    the patch names for its diffs)."""
    src = check_source(Path(src), project)
    build = Path(build)
    archive = check_build(build, project)
    units = nb.units(build, src)
    if not units:
        raise InputError(f"--mlx-build {build}: compile_commands.json names no unit of {src} "
                         "(is it the build of this checkout?)")
    stages = tuple(s for s in (stages or STAGES) if project.bindings or s not in BINDING_STAGES)
    with_bindings = any(s in BINDING_STAGES for s in stages)
    patch_text, touched, groups = check_patch(Path(patch), src, units, with_bindings)
    build_deps = check_headers(build, src, units, groups, with_bindings)
    pre = {}
    if with_bindings:
        try:
            pre = nbind.check_prerequisites(src, want_tests="mlx-cpp" in stages)
        except nbind.BindingsError as e:
            raise InputError(str(e))
        if project.marker == "mlx/mlx.h" and not (src / "python" / "mlx" / "__init__.py").is_file() \
                and not (src / "python" / "mlx").is_dir():
            raise InputError(f"--mlx-source {src} has no python/mlx (the Python package's sources)")
    if "mlx-python" in stages and not (src / "python" / "tests").is_dir():
        raise InputError(f"--mlx-source {src} has no python/tests (MLX's Python tests)")
    root = Path(cache) if cache else resources.cache_root()
    try:
        rundir.check_writable(root, "--cache")
    except rundir.OutDirError as e:
        raise InputError(str(e))
    try:
        claims = native_patch.claims(patch)
        if handoff is None:
            handoff = native_patch.handoff_tests(patch) if "mlx-python" in stages else []
    except native_patch.PatchError as e:
        raise InputError(str(e))
    for test in handoff:
        if not Path(test).is_file():
            raise InputError(f"the regression test {test} does not exist")
    if handoff and not (src / "python" / "tests" / "mlx_tests.py").is_file():
        raise InputError(f"--mlx-source {src} has no python/tests/mlx_tests.py, the base class of the "
                         "patch's regression tests")
    return Gate(project, src, build, archive, units, touched, groups, patch_text,
                nb.archive_libraries(nb.read_cache(build)), opt, jobs or os.cpu_count() or 2,
                root, fresh, stages, mlx_tests_filter, environment.git_commit(src), pre, claims=claims,
                build_deps=build_deps, handoff=[Path(t) for t in handoff])


def _say(gate: Gate, msg: str) -> None:
    if gate.say:
        gate.say(msg)


# --- compiling and linking ---------------------------------------------------------

def suite_objects(gate: Gate, overlay: Path | None = None) -> list:
    """The C++ suite's objects; against the patched headers too when `overlay` is given
    (the suite includes MLX's headers: compiled against the pristine ones it would
    disagree with the patched units about a changed class)."""
    project, unit = gate.project, gate.first_unit
    suite = [p for p in sorted(Path(project.suite_include).rglob("*")) if p.is_file()]
    first = ["-I", str(overlay)] if overlay is not None else []
    key = "suite-" + native_cache.digest(unit.compiler, list(unit.flags),
                                         native_cache.compiler_version(unit.compiler), gate.headers,
                                         *[p.name.encode() + p.read_bytes() for p in suite],
                                         *[Path(p).read_bytes() for p in project.suite_sources],
                                         *([gate.header_texts] if overlay is not None else []))
    tag = "-patched" if overlay is not None else ""
    jobs = [native_cache.Job(
        f"compile-suite{tag}-{Path(s).stem}", Path(s).stem + ".o",
        lambda obj, s=s: [unit.compiler, *first, *unit.flags, "-I", project.suite_include, "-c", s, "-o", obj],
        unit.directory, f"the native suite ({Path(s).name})") for s in project.suite_sources]
    objs = native_cache.compile_cached(key, jobs, gate.cache, gate.rec, gate.jobs, gate.fresh)
    return [objs[j.name] for j in jobs]


def resolve_header_units(gate: Gate) -> dict:
    """{unit: group} of every unit that includes a touched header and is not itself touched:
    libmlx's (the build's dependency files, else -MM), the bindings' and C++ tests' (-MM,
    cached). StepFailed when a touched header has no includer at all."""
    texts = gate.header_texts
    if not texts:
        return {}
    deps = dict(gate.build_deps)
    scan = [(rel, gate.units[rel], "mlx") for rel in gate.units if rel not in deps]
    if gate.bindings is not None:
        # only the parts this run links: the extension (harness, MLX's Python tests), the C++ tests
        linked = {"core"} if {"harness", "mlx-python"} & set(gate.stages) else set()
        linked |= {"tests"} if "mlx-cpp" in gate.stages else set()
        scan += [(rel, u, g) for rel, (g, u) in gate.bindings.units.items() if g in linked]
    group = {rel: "mlx" for rel in gate.units}

    def one(item):
        rel, unit, _ = item
        return nheaders.scan(unit, rel, gate.src, gate.cache_root, gate.headers)
    try:
        found = native_cache.parallel(one, scan, gate.jobs)
    except nheaders.HeaderError as e:
        raise StepFailed(str(e))
    for (rel, _, g), ds in zip(scan, found):
        deps[rel], group[rel] = ds, g
    for h in texts:
        if not nheaders.includers([h], deps):
            raise StepFailed(f"the patch touches the header {h}, which no unit of this build, its bindings "
                             "or its C++ tests includes")
    return {rel: group[rel] for rel in nheaders.includers(texts, deps) if rel not in gate.touched}


def _stem(rel: str) -> str:
    return nvar.stem(rel)


def unit_objects(gate: Gate) -> dict:
    """{variant: {rel: object}} for every touched translation unit, and in the patched
    variant every unit including a touched header (against the patched headers; pristine
    keeps the archive's objects); cached per unit and text."""
    pairs = [(v, rel) for rel in gate.compiled for v in VARIANTS]
    pairs += [("patched", rel) for rel in gate.header_units]
    texts = gate.header_texts

    def one(pair):
        v, rel = pair
        text = gate.touched[rel][0 if v == "pristine" else 1] if rel in gate.touched else \
            (gate.src / rel).read_text(encoding="utf-8")
        return nvar.unit_object(gate, v, rel, text, gate.unit(rel), texts if v == "patched" else None)
    objs = native_cache.parallel(one, pairs, gate.jobs)
    out = {v: {} for v in VARIANTS}
    for (v, rel), o in zip(pairs, objs):
        out[v][rel] = o
    return out


def build_variants(gate: Gate) -> dict:
    """{variant: variants.Variant}: bindings (once per checkout), touched units (per text),
    suite objects, links (per set of objects): everything reused when it can be."""
    t0 = time.perf_counter()
    gate.headers = _headers(gate.project, gate.src)
    gate.archive_sha256 = nb.sha256_file(gate.archive)
    if gate.needs_bindings:
        try:
            gate.bindings = nbind.ensure(gate.cache_root, gate.src, gate.build, gate.commit, gate.rec,
                                         gate.say or (lambda m: None), gate.jobs, gate.fresh,
                                         gate.prerequisites or None, gate.headers)
        except nbind.BindingsError as e:
            raise StepFailed(str(e))
    gate.header_units = resolve_header_units(gate)
    if gate.header_units:
        _say(gate, f"headers {', '.join(gate.header_texts)}: {len(gate.header_units)} units including them "
                   "are recompiled for the patched build")
    objs = unit_objects(gate)
    suite = {v: None for v in VARIANTS}
    if "native" in gate.stages:
        suite = dict.fromkeys(VARIANTS, suite_objects(gate))
        if gate.header_texts:
            suite["patched"] = suite_objects(gate, nheaders.write_overlay(gate.work, gate.header_texts))
    parts = tuple(p for p, s in (("package", "harness"), ("package", "mlx-python"), ("tests", "mlx-cpp"),
                                 ("suite", "native")) if s in gate.stages)
    built = {v: nvar.link_variant(gate, v, objs[v], tuple(dict.fromkeys(parts)), gate.bindings, suite[v])
             for v in VARIANTS}
    _say(gate, "builds: " + ", ".join(f"{v} {'reused' if b.reused else 'linked'}" for v, b in built.items())
         + f" ({time.perf_counter() - t0:.1f} s)")
    return built


# --- the suites on one build ----------------------------------------------------------------

JIT_UNITS = ("mlx/backend/cpu/compiled", "mlx/compile", "mlx/backend/cpu/jit")


def build_env(variant: nvar.Variant, gate: Gate | None = None) -> dict:
    """The environment every process of one build runs in, with its own $TMPDIR: MLX
    compiles fused CPU kernels at run time and keeps them under $TMPDIR/mlx/<version>,
    written in place, and the two builds report the same version, so running side by
    side they would read each other's half-written kernels. One directory per checkout
    and variant, kept in the cache (the kernels are reused by later gates); per patch
    too when it touches the kernel generator."""
    if gate is None:
        tmp = variant.path / "tmp"
    else:
        jit = [r for r in gate.touched if r.startswith(JIT_UNITS)]
        tag = f"{(gate.commit or 'nocommit')[:12]}-{variant.name}" + (
            "-" + native_cache.digest([gate.touched[r] for r in jit])[:12] if jit and variant.name == "patched" else "")
        tmp = gate.cache_root / "mlx-tmp" / tag
    tmp.mkdir(parents=True, exist_ok=True)
    return dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(tmp))


def python_env(variant: nvar.Variant, gate: Gate | None = None) -> dict:
    """The built package first on PYTHONPATH, then this project's package (when it runs
    from a checkout), then whatever was there."""
    env = build_env(variant, gate)
    parts = [str(variant.package_parent), str(PACKAGE_PARENT)]
    if os.environ.get("PYTHONPATH"):
        parts.append(os.environ["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def import_check(gate: Gate, variant: nvar.Variant) -> dict:
    """The built package is the `mlx` a child imports (and its extension loads)."""
    code = "import json, mlx.core as mx; print(json.dumps({'version': mx.__version__, 'file': mx.__file__}))"
    e = gate.rec.run(f"import-{variant.name}", [sys.executable, "-c", code], gate.work, env=python_env(variant, gate))
    out = (gate.rec.root / e["stdout"]).read_text(encoding="utf-8").strip().splitlines()
    try:
        info = json.loads(out[-1])
    except (ValueError, IndexError):
        info = None
    if e["exit_code"] != 0 or not info:
        raise StepFailed(f"the {variant.name} MLX package does not import (exit {e['exit_code']}): "
                         f"see {{out}}/{e['stderr']}")
    if not str(Path(info["file"]).resolve()).startswith(str(variant.path.resolve())):
        raise StepFailed(f"the {variant.name} build is not the mlx that Python imports ({info['file']}): "
                         "is PYTHONPATH overridden by a .pth file?")
    return info


def _execute(rec, cid_base: str, cwd, env=None, idle_timeout: float | None = None):
    count = [0]

    def execute(argv, n=None):
        count[0] += 1
        cid = cid_base + (f"-{count[0]}" if count[0] > 1 else "")
        e = rec.run(cid, argv, cwd, env=env, idle_timeout=idle_timeout)
        return (e["exit_code"], (rec.root / e["stdout"]).read_text(encoding="utf-8"),
                (rec.root / e["stderr"]).read_text(encoding="utf-8"))
    return execute, count


def run_harness(gate: Gate, variant: nvar.Variant, input_path: Path, cid: str | None = None) -> native_suite.NativeRun:
    """Every scenario through the scenario worker on this build; a dead worker is one
    crashed record and the next worker starts at the following scenario."""
    worker = f"{PKG}.running.worker"
    execute, count = _execute(gate.rec, cid or f"run-{variant.name}", PACKAGE_PARENT, python_env(variant, gate),
                              gate.hang_s)
    with open(input_path, encoding="utf-8") as fh:
        names = [s["name"] for s in json.load(fh)["scenarios"]]
    run, start = native_suite.NativeRun(), 0
    try:
        while start < len(names):
            start = native_suite._one_process([sys.executable, "-m", worker], input_path, names, start,
                                              run, execute, extra=("cpu",), decode=json.loads)
    except native_suite.NativeError as e:
        raise StepFailed(f"the harness on the {variant.name} build {e}; see {{out}}/logs/run-{variant.name}"
                         f"{'-' + str(count[0]) if count[0] > 1 else ''}.err")
    return run


def run_native(gate: Gate, variant: nvar.Variant, input_path: Path, rec, cid: str | None = None) -> tuple:
    execute, count = _execute(rec, cid or f"run-{variant.name}", gate.work, idle_timeout=gate.hang_s)
    try:
        run = native_suite.run_binary(variant.suite_binary, input_path, execute=execute)
    except native_suite.NativeError as e:   # dead before any scenario: keep the logs, exit 2
        raise StepFailed(f"the {variant.name} native suite {e}; see {{out}}/"
                         f"{gate.native_dir + '/' if gate.native_dir else ''}logs/run-{variant.name}"
                         f"{'-' + str(count[0]) if count[0] > 1 else ''}.err")
    return run, (fast_path(rec, variant.name, variant.suite_binary, gate.work) if cid is None else None)


def fast_path(rec, variant: str, exe, cwd) -> dict | None:
    """{op: bool}: does a right-sorted, non-broadcast VJP (the MoE case) still go through
    the segmented matmul? None when the binary has no such probe (a fixture's suite)."""
    e = rec.run(f"fastpath-{variant}", [exe, "--fast-path"], cwd)
    if e["exit_code"] != 0:
        return None
    for line in (rec.root / e["stdout"]).read_text(encoding="utf-8").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and isinstance(msg.get("fast_path"), dict):
            return {str(k): bool(v) for k, v in msg["fast_path"].items()}
    return None


def tests_dir(gate: Gate, variant: str) -> Path:
    """MLX's Python tests a build runs: the checkout's on pristine; on patched, when the
    patch edits them, a copy with the patched files (the checkout is not touched)."""
    edits = {r: t[1] for r, t in gate.touched.items() if gate.unit_group(r) == "mlx-tests"}
    src = gate.src / "python" / "tests"
    if variant == "pristine" or not edits:
        return src
    dest = gate.work / "python-tests-patched"
    if not dest.is_dir():
        tmp = gate.work / ".python-tests-patched"
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for rel, text in edits.items():
            (tmp / Path(rel).relative_to("python/tests")).write_text(text, encoding="utf-8")
        os.replace(tmp, dest)
    return dest


def handoff_dir(gate: Gate) -> Path:
    """The patch's regression tests beside MLX's mlx_tests.py (their base class), in a
    folder of this run: run as MLX runs its own tests."""
    dest = gate.work / "handoff-tests"
    if not dest.is_dir():
        tmp = gate.work / ".handoff-tests"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        shutil.copy2(gate.src / "python" / "tests" / "mlx_tests.py", tmp / "mlx_tests.py")
        for test in gate.handoff:
            shutil.copy2(test, tmp / Path(test).name)
        os.replace(tmp, dest)
    return dest


def run_handoff(gate: Gate, variant: nvar.Variant) -> dict:
    cwd = gate.work / f"handoff-{variant.name}"
    cwd.mkdir(parents=True, exist_ok=True)
    execute, _ = _execute(gate.rec, f"handoff-{variant.name}", cwd, python_env(variant, gate), gate.hang_s)
    try:
        return mlxtests.run_python(handoff_dir(gate), execute, None)
    except RuntimeError as e:
        raise StepFailed(f"{e} (the patch's regression tests, {variant.name} build; see "
                         f"{{out}}/logs/handoff-{variant.name}.err)")


def edited_tests(gate: Gate) -> list:
    """The test ids whose method the patch adds, removes or changes."""
    return sorted({t for r, (a, b) in gate.touched.items() if gate.unit_group(r) == "mlx-tests"
                   for t in mlxtests.edited_tests(r, a, b)})


def old_tests_on_patched(gate: Gate, built: dict, ids: list) -> dict:
    """{test id: outcome} of the old (pristine) version of each edited test on the patched
    build: what the edit changed expectations for (the old test asserting the defect fails)."""
    cwd = gate.work / "mlx-python-old-on-patched"
    cwd.mkdir(parents=True, exist_ok=True)
    ids_file = cwd / "ids.json"
    ids_file.write_text(json.dumps(ids), encoding="utf-8")
    execute, _ = _execute(gate.rec, "mlx-python-old-on-patched", cwd, python_env(built["patched"], gate), gate.hang_s)
    try:
        got = mlxtests.run_python(tests_dir(gate, "pristine"), execute, None, ids_file=ids_file)
    except RuntimeError as e:
        raise StepFailed(f"{e} (the old edited tests on the patched build; see "
                         "{out}/logs/mlx-python-old-on-patched.err)")
    return {t: (got["tests"].get(t) or {}).get("outcome") for t in ids}


def run_mlx_python(gate: Gate, variant: nvar.Variant) -> dict:
    cwd = gate.work / f"mlx-python-{variant.name}"
    cwd.mkdir(parents=True, exist_ok=True)
    execute, _ = _execute(gate.rec, f"mlx-python-{variant.name}", cwd, python_env(variant, gate), gate.hang_s)
    try:
        return mlxtests.run_python(tests_dir(gate, variant.name), execute, gate.mlx_tests_filter)
    except RuntimeError as e:
        raise StepFailed(f"{e} ({variant.name} build; see {{out}}/logs/mlx-python-{variant.name}.err)")


def run_mlx_cpp(gate: Gate, variant: nvar.Variant) -> dict:
    cwd = gate.work / f"mlx-cpp-{variant.name}"
    cwd.mkdir(parents=True, exist_ok=True)
    # doctest reports into a file: its stdout is quiet, so the whole run gets the limit
    execute, _ = _execute(gate.rec, f"mlx-cpp-{variant.name}", cwd, build_env(variant, gate),
                          gate.hang_s * 3)
    try:
        out = mlxtests.run_cpp(variant.tests_binary, cwd, execute, gate.mlx_tests_filter)
    except RuntimeError as e:
        raise StepFailed(f"{e} ({variant.name} build; see {{out}}/logs/mlx-cpp-{variant.name}.err)")
    for n, text in enumerate(out.pop("xml"), 1):   # doctest's own report, kept beside the logs
        atomic.write_text(gate.rec.root / paths.LOGS / f"mlx-cpp-{variant.name}{'-' + str(n) if n > 1 else ''}.xml",
                          text)
    return out


# Rough cost of each stage on 2 cores, to start the longest first.
WEIGHT = {"mlx-python": 240, "mlx-cpp": 30, "harness": 20, "native": 5}


def run_suites(gate: Gate, built: dict, input_path: Path, native_rec) -> dict:
    """{(stage, variant): result} for every stage on both builds, `jobs` at a time,
    longest first, each build's import checked before anything runs on it."""
    if any(s in gate.stages for s in ("harness", "mlx-python")):
        for v in VARIANTS:
            import_check(gate, built[v])
    tasks = sorted(((s, v) for s in gate.stages for v in VARIANTS), key=lambda t: -WEIGHT.get(t[0], 1))
    runners = {"harness": lambda v: run_harness(gate, built[v], input_path),
               "native": lambda v: run_native(gate, built[v], input_path, native_rec),
               "mlx-python": lambda v: run_mlx_python(gate, built[v]),
               "mlx-cpp": lambda v: run_mlx_cpp(gate, built[v])}

    def one(task):
        stage, v = task
        t0 = time.perf_counter()
        result = runners[stage](v)
        _say(gate, f"{stage} on {v}: done in {time.perf_counter() - t0:.0f} s")
        return result
    results = native_cache.parallel(one, tasks, gate.jobs)
    return dict(zip(tasks, results))


# --- comparing the two builds ---------------------------------------------------------------

def _entries(items) -> list:
    """Scenarios or cases.files.Entry records (a bare scenario is a catalog entry)."""
    from ..cases import files
    return [e if isinstance(e, files.Entry) else files.Entry(e, "catalog", "catalog", e.expects_defect)
            for e in items]


def failing_oracles(runs: dict) -> dict:
    """{scenario: {variant: [oracles its record fails]}} for every record that does not
    pass: what the verdict holds a patch to (HELD) is read from it. Kept in gate.json;
    anyone can re-derive it from the two results files."""
    out = {}
    for v in VARIANTS:
        for r in runs[v].records:
            if r.get("status") != "pass":
                out.setdefault(r["scenario"], {})[v] = failing(r)
    return out


def _expected(e, oracles) -> bool:
    """Whether a pristine build is expected not to pass entry `e` where only `oracles` run:
    a catalog scenario's or a corpus entry's class that only a transform oracle shows
    (OpInfo.revealed_by) is not expected of a first-order executor."""
    if oracles is None or e.kind == "finding":
        return e.expects_defect
    if e.kind == "catalog":
        return e.scenario.expects_defect_under(oracles)
    return e.expects_defect and e.scenario.expects_defect_under(oracles)


def comparison(entries, runs: dict, units: list, oracles=None) -> dict:
    """One row per scenario either build ran: its op, both statuses, whether a pristine
    build is expected not to pass it, where it came from, and whether the regression
    corpus counts it in the patch's scope (rows out of it carry the reason). `oracles`:
    what the builds' executor checks (the C++ suite: judging.oracles.FIRST_ORDER); a
    catalog scenario's defect class that only another oracle shows is not expected of it."""
    by = {v: {r["scenario"]: r for r in runs[v].records} for v in VARIANTS}
    rows = []
    for e in _entries(entries):
        s = e.scenario
        if s.name in by["pristine"] or s.name in by["patched"]:
            rec = by["pristine"].get(s.name) or by["patched"][s.name]
            row = {"scenario": s.name, "op": s.op, "device": rec["device"],
                   "pristine": (by["pristine"].get(s.name) or {}).get("status"),
                   "patched": (by["patched"].get(s.name) or {}).get("status"),
                   "expects_defect": _expected(e, oracles), "source": e.kind, "in_scope": e.in_scope}
            if e.kind == "regression":
                row["signature"] = e.meta.get("signature")
                row["recorded_pristine"] = e.meta["pristine"]["status"]
            if not e.in_scope:
                row["reason"] = e.reason
            rows.append(row)
    skipped = {k["scenario"]: k["reason"] for v in VARIANTS for k in runs[v].skipped}
    return {"units": units, "rows": rows,
            "skipped": [{"scenario": k, "reason": r} for k, r in skipped.items()]}


def verdict(comp: dict, scope: dict | None = None, what: str = "harness", fails: dict | None = None,
            reruns: dict | None = None, tags: dict | None = None) -> tuple:
    """(exit code, one line) for one comparison under the scope (default: auto from this
    comparison alone)."""
    scope = scope or resolve_scope(None, [comp])
    j = judge(comp, scope, fails, reruns, tags)
    if not j["rows"]:
        return 1, f"{what}: no scenario ran"
    fp = comp.get("fast_path") or {}
    lost = sorted(op for op, on in (fp.get("pristine") or {}).items()
                  if on and (fp.get("patched") or {}).get(op) is False)
    head = f"{what}: "
    if lost:
        return 1, (head + f"the patched units no longer take the right-sorted segmented fast path "
                   f"({', '.join(lost)}): MoE backward passes would lose it")
    n_exp, missed, unfixed, reg = len(j["expected"]), j["missed"], j["unfixed"], j["regressed"]
    scope_txt = ", ".join(scope["ops"]) or "no op"
    line = (f"{head}pristine reproduced {n_exp - len(missed) - len(j['absent'])}/{n_exp} expected defects "
            f"of {scope_txt}; patched passes {len(j['scoped']) - len(unfixed)}/{len(j['scoped'])} of the "
            f"scenarios the patch is held to"
            + (f" (defect classes {', '.join(j['classes'])}, and the corpus)" if j["classes"] else "")
            + " in the gradient rules' own oracles"
            + (f" ({j['corpus']} from the regression corpus)" if j["corpus"] else "")
            + f"; {len(reg)} regressions (of the {j['passing_pristine']} scenarios pristine passes, or newly "
            f"failing a gradient-rule check)"
            + f"; {len(j['pre_existing'])} fail on both (pre-existing)"
            + (f"; {len(j['other_rules'])} of the scope's fail on both only in oracles of other rules "
               f"(second order, vmap, ...)" if j["other_rules"] else "")
            + (f"; {len(j['fixed'])} fixed" if j["fixed"] else "")
            + (f"; {len(j['flaky'])} flaky (the change did not come back on its reruns)" if j["flaky"] else ""))
    op_of = {r["scenario"]: r.get("op") for r in comp["rows"]}

    def some(names) -> str:
        """The first scenario of each op, each with how many more of that op."""
        by = {}
        for n in names:
            by.setdefault(op_of.get(n), []).append(n)
        return ", ".join(ns[0] + (f" (+{len(ns) - 1})" if len(ns) > 1 else "") for ns in by.values())
    bad = []
    if missed:
        bad.append(f"not reproduced on pristine: {some(missed)}")
    if unfixed:
        bad.append(f"not passing patched: {some(unfixed)}")
    if reg:
        bad.append(f"regressed: {some(reg)}")
    if bad:
        return 1, line + " -- " + "; ".join(bad)
    return 0, line


def overall(outcome: dict, scope_arg=None) -> tuple:
    """(exit code, scope, [lines]) over every stage that ran."""
    comps = [outcome.get("comparison"), outcome.get("native_comparison")]
    mlx_rows = outcome.get("mlx_tests", {}).get("rows", [])
    fails = (outcome.get("gate") or {}).get("failing") or {}
    reruns = (outcome.get("gate") or {}).get("scenario_reruns") or {}
    scope = resolve_scope(scope_arg, comps, mlx_rows, {0: reruns.get("harness"), 1: reruns.get("native")},
                          (outcome.get("gate") or {}).get("claims"))
    codes, lines = [], [f"scope: {', '.join(scope['ops']) or 'none'} ({scope['how']})"]
    info = outcome.get("gate") or {}
    for comp, what in ((outcome.get("comparison"), "harness"), (outcome.get("native_comparison"), "native")):
        if comp is not None:
            # the classes the gradient rules' own oracles (HELD, first order) show: what the
            # verdict holds a patch to, on either executor
            tags = info.get("defect_tags_first_order", info.get("defect_tags"))
            c, line = verdict(comp, scope, what, fails.get(what), reruns.get(what), tags)
            codes.append(c)
            lines.append(line)
    if "mlx_tests" in outcome:
        ok, line = mlxtests.verdict(mlx_rows, (outcome.get("gate") or {}).get("mlx_test_reruns"))
        codes.append(0 if ok else 1)
        lines.append(line)
    changed = bool(changed_ops(*comps, reruns={0: reruns.get("harness"), 1: reruns.get("native")})) \
        or any(r["change"] for r in mlx_rows)
    if scope_arg != "none" and not changed:
        codes.append(1)
        lines.append("the patch changes no scenario's and no MLX test's outcome (pass --fixes none "
                     "when that is what you expect)")
    return (max(codes) if codes else 1), scope, lines


# --- the run directory ----------------------------------------------------------------------

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
        for v, data in outcome.get("results", {}).items():
            data["environment"] = env
            # Compact: these carry every observed array, and indenting them costs ~0.5 s.
            atomic.write_text(tmp / paths.results_for(v), jsonio.dumps(data, sort_keys=True) + "\n")
        for v, data in outcome.get("native_results", {}).items():
            data["environment"] = env
            atomic.write_text(tmp / gate.native_dir / paths.results_for(v),
                              jsonio.dumps(data, sort_keys=True) + "\n")
        if "comparison" in outcome:
            atomic.write_json(tmp / paths.COMPARISON, outcome["comparison"])
        if "native_comparison" in outcome:
            atomic.write_json(tmp / gate.native_dir / paths.COMPARISON, outcome["native_comparison"])
        if "mlx_tests" in outcome:
            atomic.write_json(tmp / MLX_TESTS, outcome["mlx_tests"])
        if "gate" in outcome:
            atomic.write_json(tmp / "gate.json", outcome["gate"])
        gate.rec.save()
        if outcome.get("native_rec") is not None:
            outcome.pop("native_rec").save()
    return outcome


def native_environment(gate: Gate, seconds: float) -> dict:
    """The subject: the checkout (commit, mlx/version.h), its build and every flag used."""
    first = gate.first_unit
    b = gate.bindings
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
            "bindings": None if b is None else {
                "key": b.key, "extension": b.extension, "nanobind": b.meta.get("nanobind"),
                "python": b.meta.get("python"), "flags_note": b.meta.get("flags_note"),
                "flags": {g: list(next((u.flags for gg, u in b.units.values() if gg == g), ()))
                          for g in nbind.GROUPS}},
            "stages": list(gate.stages),
            "header_units": nheaders.summary(gate.header_texts, gate.header_units) if gate.header_texts else None,
            "patch_sha256": hashlib.sha256(gate.patch_text.encode()).hexdigest(),
            "patch_series": [{"name": n, "sha256": hashlib.sha256(t.encode()).hexdigest()}
                             for n, t in native_patch.split_combined(gate.patch_text)],
            "handoff_tests": [{"name": Path(t).name, "sha256": nb.sha256_file(Path(t))} for t in gate.handoff],
            "seconds": round(seconds, 3)}


def rerun_test(gate: Gate, built: dict, suite: str, test: str, variant: str) -> str | None:
    """One MLX test again, alone, in a fresh process on one build: its outcome."""
    b = built[variant]
    n = len(gate.rec.entries)
    cwd = gate.work / f"rerun-{variant}"
    cwd.mkdir(parents=True, exist_ok=True)
    base = f"rerun-{suite}-{variant}-{n}"
    if suite in ("python", "handoff"):
        ids = cwd / f"ids-{n}.json"
        ids.write_text(json.dumps([test]), encoding="utf-8")
        execute, _ = _execute(gate.rec, base, cwd, python_env(b, gate), gate.hang_s)
        where = tests_dir(gate, variant) if suite == "python" else handoff_dir(gate)
        try:
            got = mlxtests.run_python(where, execute, None, ids_file=ids)
        except RuntimeError:
            return None
    else:
        execute, _ = _execute(gate.rec, base, cwd, build_env(b, gate), gate.hang_s * 3)
        try:
            got = mlxtests.run_cpp(b.tests_binary, cwd, execute, only=test)
        except RuntimeError:
            return None
        got.pop("xml", None)
    return (got["tests"].get(test) or {}).get("outcome")


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


def run(gate: Gate, entries: list, out, replace: bool = False) -> dict:
    """Build, run and record into the run directory `out` (checked by the caller).
    `entries`: scenarios or cases.files.Entry records. Returns {"comparison",
    "native_comparison", "mlx_tests", ...} or {"failed": one line}."""
    return staged_run(gate, out, lambda tmp: _build_and_run(gate, _entries(entries), tmp), "native-gate", replace)


def biting_tags(entries, oracles=None) -> dict:
    """{scenario: the defect tags that bite on its call} for the expected defects (catalog
    scenarios: conditional tags resolved, and with `oracles` only the tags those oracles
    show, OpInfo.expects_defect; files and corpus entries: their tags as given)."""
    out = {}
    for e in entries:
        s = e.scenario
        if not (e.expects_defect and s.defect_tags):
            continue
        if s.info is None:   # an unbound scenario (an op this package does not know): as given
            tags = list(s.defect_tags)
        else:
            tags = [t for t in s.defect_tags if s.info.expects_defect((t,), s.params, oracles)]
        if tags:
            out[s.name] = tags
    return out


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
           "gate": {"seconds": {"build": round(t_built - t0, 3), "suites": round(time.perf_counter() - t_built, 3)},
                    "builds": {v: {"reused": b.reused, "parts": {p: str(d) for p, d in b.parts.items()}}
                               for v, b in built.items()},
                    "stages": list(gate.stages)}}
    failing_by = out["gate"]["failing"] = {}
    reruns = out["gate"]["scenario_reruns"] = {}
    from ..judging.oracles import FIRST_ORDER
    # The defect classes that bite on each expected defect (conditional tags resolved): all
    # of them, and those the first-order oracles show (what the verdict holds a patch to:
    # a scenario once the patch fixes each of those classes; overall()).
    out["gate"]["defect_tags"] = biting_tags(entries)
    out["gate"]["defect_tags_first_order"] = biting_tags(entries, FIRST_ORDER)
    if gate.claims is not None:
        out["gate"]["claims"] = [list(c) for c in gate.claims]
    if "harness" in gate.stages:
        runs = {v: results[("harness", v)] for v in VARIANTS}
        out["results"] = {v: native_suite.results_for(scenarios, runs[v], {}, f"gate-{v}", model=False)
                          for v in VARIANTS}
        out["comparison"] = comparison(entries, runs, list(gate.touched))
        failing_by["harness"] = failing_oracles(runs)
        reruns["harness"] = confirm_regressions(gate, built, out["comparison"], scenarios, "harness", native_rec,
                                                failing_by["harness"])
    if "native" in gate.stages:
        runs = {v: results[("native", v)][0] for v in VARIANTS}
        out["native_results"] = {v: native_suite.results_for(scenarios, runs[v], {}, f"native-{v}")
                                 for v in VARIANTS}
        from ..judging.oracles import FIRST_ORDER
        comp = comparison(entries, runs, list(gate.touched), FIRST_ORDER)
        comp["fast_path"] = {v: results[("native", v)][1] for v in VARIANTS}
        out["native_comparison"] = comp
        failing_by["native"] = failing_oracles(runs)
        reruns["native"] = confirm_regressions(gate, built, comp, scenarios, "native", native_rec,
                                               failing_by["native"])
    if "mlx-python" in gate.stages and gate.handoff:
        _say(gate, f"running the patch's {len(gate.handoff)} regression test files on both builds")
        for v in VARIANTS:
            results[("handoff", v)] = run_handoff(gate, built[v])
    if any(s in gate.stages for s in ("mlx-python", "mlx-cpp")):
        out["mlx_tests"], out["gate"]["mlx_test_reruns"] = mlx_tests_document(results, gate, built)
    return out

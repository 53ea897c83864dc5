"""The gate's inputs: the checkout, its static build, the patch (or series), the
stages to run and the regression tests a series hands off, each checked before
anything is written or compiled (`prepare`), and the `Gate` record the later
steps share (build.py, suites.py, run.py).

Bad input raises InputError (one line on stderr, exit 2, nothing written); a
step that goes wrong later raises StepFailed (the run directory is kept, exit 2).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core import resources
from ..evidence import rundir
from ..native import build as nb
from ..native.build import Project, Unit
from ..running import environment
from . import bindings as nbind
from . import headers as nheaders
from . import patch as native_patch
from . import variants as nvar

VARIANTS = ("pristine", "patched")
# patch/series (the diffs in order) when it exists, else the one diff.
DEFAULT_PATCH = (resources.patch_dir() / "series" if (resources.patch_dir() / "series").is_file()
                 else resources.patch_dir() / "gather_vjp_sorted.diff")
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
    fixes: object = None             # --fixes as parsed: None (auto), "none" or [ops]
    sweep: bool = False              # run the sweep's registered reproducers on both builds (the CLI: unless --no-sweep)

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
    units = check_units(build, src)
    stages = tuple(s for s in (stages or STAGES) if project.bindings or s not in BINDING_STAGES)
    with_bindings = any(s in BINDING_STAGES for s in stages)
    patch_text, touched, groups = check_patch(Path(patch), src, units, with_bindings)
    build_deps = check_headers(build, src, units, groups, with_bindings)
    pre = check_python_side(src, project, stages) if with_bindings else {}
    if "mlx-python" in stages and not (src / "python" / "tests").is_dir():
        raise InputError(f"--mlx-source {src} has no python/tests (MLX's Python tests)")
    root = check_cache(cache)
    claims, handoff = check_series(Path(patch), src, stages, handoff)
    return Gate(project, src, build, archive, units, touched, groups, patch_text,
                nb.archive_libraries(nb.read_cache(build)), opt, jobs or os.cpu_count() or 2,
                root, fresh, stages, mlx_tests_filter, environment.git_commit(src), pre, claims=claims,
                build_deps=build_deps, handoff=handoff)


def check_units(build: Path, src: Path) -> dict:
    """{rel: Unit} of compile_commands.json, which must name units of this checkout."""
    units = nb.units(build, src)
    if not units:
        raise InputError(f"--mlx-build {build}: compile_commands.json names no unit of {src} "
                         "(is it the build of this checkout?)")
    return units


def check_python_side(src: Path, project: Project, stages: tuple) -> dict:
    """The bindings' prerequisites (nanobind, doctest, ...) and the Python package's sources."""
    try:
        pre = nbind.check_prerequisites(src, want_tests="mlx-cpp" in stages)
    except nbind.BindingsError as e:
        raise InputError(str(e))
    if project.marker == "mlx/mlx.h" and not (src / "python" / "mlx" / "__init__.py").is_file() \
            and not (src / "python" / "mlx").is_dir():
        raise InputError(f"--mlx-source {src} has no python/mlx (the Python package's sources)")
    return pre


def check_cache(cache) -> Path:
    """The cache folder (--cache, else the default), which must be writable."""
    root = Path(cache) if cache else resources.cache_root()
    try:
        rundir.check_writable(root, "--cache")
    except rundir.OutDirError as e:
        raise InputError(str(e))
    return root


def check_series(patch: Path, src: Path, stages: tuple, handoff) -> tuple:
    """(claims of the series' manifest, [regression test files]): the files must exist,
    and MLX's mlx_tests.py (their base class) with them."""
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
    return claims, [Path(t) for t in handoff]


def _say(gate: Gate, msg: str) -> None:
    if gate.say:
        gate.say(msg)

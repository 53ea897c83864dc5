"""MLX's Python bindings and C++ tests from a checkout: compiled once, cached.

The gate needs MLX importable from Python (to run the whole harness, the
fuzzer and MLX's own Python tests) and MLX's C++ test binary, each built twice:
with the pristine and with the patched translation units ahead of the static
`libmlx.a` of `--mlx-build`. Neither the bindings (`python/src`, ~23 units, plus
nanobind's own ~10) nor the tests (`tests/`, ~20 units) depend on the units a
patch touches, so their objects are compiled once per checkout and flags and
kept in the cache; every later gate only links (variants.py).

How (offline, no network at build time):
1. configure the checkout with MLX's own CMake, with the options of the user's
   build (`CMakeCache.txt`) plus `MLX_BUILD_PYTHON_BINDINGS=ON MLX_BUILD_TESTS=ON`,
   FetchContent pointed at local directories: nanobind at the version MLX pins,
   installed from the package registry (`pip install nanobind==X`; a directory
   whose CMakeLists.txt includes its nanobind-config.cmake), doctest at a stub
   target (the header comes from the system: Debian's doctest-dev), json and
   fmt as the user's build found them. `FETCHCONTENT_FULLY_DISCONNECTED=ON`
   makes anything missed fail at once instead of reaching for the network;
2. compile the bindings', nanobind's and the tests' objects ourselves with the
   exact flags of that configure's compile_commands.json, minus link-time
   optimisation (`-flto...`): with it every link of the extension takes about
   a minute, without it a few seconds, and it changes no result. Every compile
   is recorded (command, exit code, time, logs) and reported as a progress line.

The configure directory (`mlx-bindings/configure-<key>`, its compile flags refer
to it) and the objects (`mlx-bindings/objects-<key>`) are cache entries; the
objects' entry is built in a temporary directory and renamed into place, so
Ctrl-C (or a failed compile) leaves no half-written entry.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.exits import exit_text
from ..evidence import atomic
from ..native import build as nb
from . import cache as native_cache

ROOT_NAME = "mlx-bindings"
GROUPS = ("core", "extern", "tests")   # the extension's objects, nanobind's, the C++ tests'
LTO = re.compile(r"^(-flto(=.*)?|-fno-fat-lto-objects|-ffat-lto-objects|-flto-partition=.*)$")
# Options carried over from the user's build so that the bindings match its libmlx.a.
CARRIED = re.compile(r"^(MLX_BUILD_\w+|MLX_METAL_\w+|MLX_CUDA_\w+|MLX_ENABLE_\w+|USE_SYSTEM_FMT|"
                     r"CMAKE_BUILD_TYPE|CMAKE_C_COMPILER|CMAKE_CXX_COMPILER|CMAKE_CXX_FLAGS|"
                     r"CMAKE_OSX_\w+|FETCHCONTENT_SOURCE_DIR_\w+)$")
OURS = {"MLX_BUILD_PYTHON_BINDINGS": "ON", "MLX_BUILD_TESTS": "ON", "MLX_BUILD_PYTHON_STUBS": "OFF",
        "MLX_BUILD_EXAMPLES": "OFF", "MLX_BUILD_BENCHMARKS": "OFF", "BUILD_SHARED_LIBS": "OFF",
        "FETCHCONTENT_FULLY_DISCONNECTED": "ON", "CMAKE_EXPORT_COMPILE_COMMANDS": "ON"}


class BindingsError(RuntimeError):
    """The bindings cannot be built here (one line, exit 2)."""


def cache_dir(root: Path) -> Path:
    return Path(root) / ROOT_NAME


# --- prerequisites (checked before any work) -------------------------------------------

def pinned_nanobind(src: Path) -> str | None:
    """The nanobind version the checkout's CMakeLists.txt fetches (GIT_TAG vX.Y.Z)."""
    try:
        text = (Path(src) / "CMakeLists.txt").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"FetchContent_Declare\(\s*nanobind\b(.*?)\)", text, re.S)
    tag = re.search(r"GIT_TAG\s+v?([0-9][\w.]*)", m.group(1)) if m else None
    return tag.group(1) if tag else None


def installed_nanobind() -> tuple:
    """(version, cmake dir) of the nanobind this Python has, or (None, None)."""
    try:
        from importlib import metadata
        version = metadata.version("nanobind")
        import nanobind
        return version, nanobind.cmake_dir()
    except Exception:   # not installed, or an unusable installation
        return None, None


def doctest_include() -> str | None:
    """The directory holding doctest/doctest.h (Debian's doctest-dev: /usr/include)."""
    for d in ("/usr/include", "/usr/local/include", "/opt/homebrew/include"):
        if (Path(d) / "doctest" / "doctest.h").is_file():
            return d
    return None


def python_headers() -> str | None:
    inc = sysconfig.get_paths().get("include")
    return inc if inc and (Path(inc) / "Python.h").is_file() else None


def check_prerequisites(src: Path, want_tests: bool = True) -> dict:
    """What the one-time build needs, each missing piece named in one line."""
    if shutil.which("cmake") is None:
        raise BindingsError("cmake is not installed (MLX's CMake configures the bindings): "
                            "apt-get install cmake")
    pinned = pinned_nanobind(src)
    if pinned is None:
        raise BindingsError(f"{src}/CMakeLists.txt declares no nanobind version (GIT_TAG): "
                            "cannot build MLX's Python bindings from this checkout")
    version, cmake_dir = installed_nanobind()
    if version != pinned:
        have = f"nanobind {version} is installed" if version else "nanobind is not installed"
        raise BindingsError(f"MLX at this checkout pins nanobind {pinned} and {have}: "
                            f"{Path(sys.executable).name} -m pip install nanobind=={pinned}")
    if python_headers() is None:
        raise BindingsError(f"no Python.h for {sys.executable} (the bindings compile against it): "
                            "install this Python's development headers (Debian: python3-dev)")
    doctest = doctest_include()
    if want_tests and doctest is None:
        raise BindingsError("doctest/doctest.h not found (MLX's C++ tests need it): "
                            "apt-get install doctest-dev, or leave the C++ tests out (--mlx-tests python)")
    return {"nanobind": version, "nanobind_cmake_dir": cmake_dir, "doctest_include": doctest,
            "python": sys.executable, "python_version": sys.version.split()[0]}


# --- the FetchContent stand-ins ------------------------------------------------------

def _write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        atomic.write_text(path, text)


def dependency_dirs(root: Path, pre: dict, user_cache: dict, user_build: Path) -> dict:
    """FETCHCONTENT_SOURCE_DIR_<NAME> -> local directory, for every dependency MLX's
    CMake fetches: the user's build's choices first, then our stand-ins."""
    deps = cache_dir(root) / "deps"
    out = {k: v for k, v in user_cache.items() if k.startswith("FETCHCONTENT_SOURCE_DIR_") and v}
    for name in ("json", "fmt", "gguflib"):
        key = f"FETCHCONTENT_SOURCE_DIR_{name.upper()}"
        fetched = Path(user_build) / "_deps" / f"{name}-src"
        if key not in out and fetched.is_dir():
            out[key] = str(fetched)
    if "FETCHCONTENT_SOURCE_DIR_JSON" not in out and Path("/usr/include/nlohmann/json.hpp").is_file():
        link = deps / "json" / "single_include" / "nlohmann"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to("/usr/include/nlohmann")
        out["FETCHCONTENT_SOURCE_DIR_JSON"] = str(deps / "json")
    nano = deps / f"nanobind-{pre['nanobind']}"
    _write_if_changed(nano / "CMakeLists.txt",
                      f"include({pre['nanobind_cmake_dir']}/nanobind-config.cmake)\n")
    out["FETCHCONTENT_SOURCE_DIR_NANOBIND"] = str(nano)
    doc = deps / "doctest"
    inc = pre.get("doctest_include")
    _write_if_changed(doc / "CMakeLists.txt", "add_library(doctest INTERFACE)\n" + (
        f"target_include_directories(doctest SYSTEM INTERFACE {inc})\n" if inc and inc != "/usr/include" else ""))
    # MLX's tests/CMakeLists.txt registers each test case with CTest; the gate runs the binary itself.
    _write_if_changed(doc / "scripts" / "cmake" / "doctest.cmake",
                      "function(doctest_discover_tests)\nendfunction()\n")
    out["FETCHCONTENT_SOURCE_DIR_DOCTEST"] = str(doc)
    return out


def configure_argv(src: Path, build_dir: Path, user_cache: dict, deps: dict) -> list:
    opts = {k: v for k, v in user_cache.items() if CARRIED.match(k)}
    opts.update(deps)
    opts.update(OURS)
    opts["Python_EXECUTABLE"] = sys.executable
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    return ["cmake", "-S", str(src), "-B", str(build_dir), *gen,
            *[f"-D{k}={v}" for k, v in sorted(opts.items())]]


# --- what the configure says -------------------------------------------------------------

def _group(path: str, src: Path, build_dir: Path, nanobind_dir: str) -> str | None:
    root = os.path.realpath(src)
    real = os.path.realpath(path)
    if real.startswith(os.path.realpath(nanobind_dir) + os.sep):
        return "extern"
    if real.startswith(os.path.realpath(build_dir) + os.sep) or not real.startswith(root + os.sep):
        return None
    rel = os.path.relpath(real, root)
    if rel.startswith("python" + os.sep + "src" + os.sep):
        return "core"
    if rel.startswith("tests" + os.sep):
        return "tests"
    return None


def object_name(group: str, path: str) -> str:
    stem = re.sub(r"[^\w.-]", "_", Path(path).name if group == "extern" else path)
    return f"{group}/{stem}.o"


def read_configure(src: Path, build_dir: Path, nanobind_dir: str) -> tuple:
    """({rel or extern path: (group, Unit)}, extension file name) from the configure."""
    try:
        entries = json.loads((build_dir / "compile_commands.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BindingsError(f"the bindings configure wrote no usable compile_commands.json ({e})")
    found = {}
    for e in entries:
        path = os.path.join(e["directory"], e["file"])
        group = _group(path, src, build_dir, nanobind_dir)
        if group is None:
            continue
        argv = nb._argv(e)
        flags = [f for f in nb.strip_flags(argv, e["file"], e["directory"]) if not LTO.match(f)]
        real = os.path.realpath(path)
        rel = real if group == "extern" else os.path.relpath(real, os.path.realpath(src))
        found[rel] = (group, nb.Unit(rel, e["directory"], argv[0], tuple(flags)))
    missing = [g for g in ("core", "extern") if not any(grp == g for grp, _ in found.values())]
    if missing:
        raise BindingsError(f"the bindings configure compiles no {' or '.join(missing)} sources "
                            "(is MLX_BUILD_PYTHON_BINDINGS honoured by this checkout?)")
    return found, extension_name(build_dir)


def extension_name(build_dir: Path) -> str:
    """core<suffix> as MLX's CMake names the extension module (nanobind decides
    between the stable ABI's .abi3.so and the interpreter's own suffix)."""
    ninja = build_dir / "build.ninja"
    if ninja.is_file():
        m = re.search(r"^build (core\.[^\s:]+):", ninja.read_text(encoding="utf-8", errors="replace"), re.M)
        if m:
            return Path(m.group(1)).name
    return "core" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")


# --- the cached build ------------------------------------------------------------------------

@dataclass
class Bindings:
    """The cached objects of one checkout's bindings and C++ tests."""
    path: Path                  # the objects' cache entry
    key: str
    units: dict                 # rel (or extern path) -> (group, build.Unit)
    extension: str              # file name of the extension module (core.cpython-...so)
    meta: dict
    reused: bool = False

    def objects(self, group: str, replace: dict | None = None) -> list:
        """The group's objects in compile order; `replace` maps a unit to another object
        (a touched unit's pristine or patched compile)."""
        replace = replace or {}
        return [replace.get(rel) or self.path / object_name(g, rel)
                for rel, (g, _) in self.units.items() if g == group]

    def unit(self, rel: str):
        hit = self.units.get(rel)
        return hit[1] if hit else None


def configure_key(src: Path, commit: str | None, user_cache: dict, pre: dict) -> str:
    carried = {k: v for k, v in user_cache.items() if CARRIED.match(k)}
    cmake_files = native_cache.tree_digest(src, "CMakeLists.txt") + native_cache.tree_digest(src, "*.cmake")
    return native_cache.digest("configure/1", str(src), commit, carried, pre["python"], pre["python_version"],
                               pre["nanobind"], bool(pre.get("doctest_include")), cmake_files,
                               _first_line(["cmake", "--version"]))


def _first_line(argv) -> str:
    try:
        return (subprocess.run(argv, capture_output=True, text=True).stdout.splitlines() or [""])[0]
    except OSError:
        return ""


def configure(root: Path, src: Path, user_build: Path, commit, rec, say, fresh=False,
              pre: dict | None = None) -> tuple:
    """(configure directory, its key): MLX's CMake run once per key (a stamp file says
    it finished; an unfinished one is redone)."""
    pre = pre or check_prerequisites(src)
    user_cache = nb.read_cache(user_build)
    key = configure_key(src, commit, user_cache, pre)
    build_dir = cache_dir(root) / f"configure-{key}"
    stamp = build_dir / "vjpcheck-configured.json"
    if stamp.is_file() and not fresh:
        try:
            native_cache.replay(rec, [json.loads(stamp.read_text(encoding="utf-8"))])
            return build_dir, key
        except (ValueError, KeyError):
            pass
    shutil.rmtree(build_dir, ignore_errors=True)
    build_dir.mkdir(parents=True)
    argv = configure_argv(src, build_dir, user_cache, dependency_dirs(root, pre, user_cache, user_build))
    say("configuring MLX's CMake for its Python bindings and C++ tests (offline)")
    done = rec.run("bindings-configure", argv, build_dir)
    if done["exit_code"] != 0:
        err = (rec.root / done["stderr"]).read_text(encoding="utf-8").strip().splitlines()
        hint = next((ln.strip() for ln in err if "Error" in ln or "error" in ln), err[-1] if err else "")
        raise BindingsError(f"configuring the bindings failed ({exit_text(done['exit_code'], 'exit')}): {hint[:200]} "
                            f"(see {{out}}/{done['stderr']})")
    atomic.write_json(stamp, native_cache._kept(rec, done, build_dir, build_dir))
    return build_dir, key


def ensure(root: Path, src: Path, user_build: Path, commit, rec, say, jobs: int = 2,
           fresh: bool = False, pre: dict | None = None, headers: str = "") -> Bindings:
    """The cached bindings and test objects of this checkout, compiled now if missing."""
    pre = pre or check_prerequisites(src)
    build_dir, ckey = configure(root, src, user_build, commit, rec, say, fresh, pre)
    units, ext = read_configure(src, build_dir, str(Path(pre["nanobind_cmake_dir"]).parent))
    sources = {rel: (Path(rel) if g == "extern" else Path(src) / rel) for rel, (g, _) in units.items()}
    key = native_cache.digest("objects/1", ckey, {rel: [g, u.compiler, list(u.flags), u.directory]
                                                  for rel, (g, u) in units.items()},
                              native_cache.compiler_version(next(iter(units.values()))[1].compiler),
                              headers, native_cache.tree_digest(Path(src) / "python" / "src", "*.h"),
                              {rel: _sha(p) for rel, p in sources.items()})
    n, t_start = len(units), time.perf_counter()
    counter = {"done": 0}

    def fill(tmp: Path) -> dict:
        say(f"compiling MLX's Python bindings and C++ tests once for this checkout: {n} objects, "
            f"{jobs} at a time (about 10 minutes on 2 cores; kept in {cache_dir(root)})")
        for g in GROUPS:
            (tmp / g).mkdir(parents=True, exist_ok=True)

        def one(item):
            rel, (g, u) = item
            name = object_name(g, rel)
            argv = [u.compiler, *u.flags, "-c", str(sources[rel]), "-o", str(tmp / name)]
            cid = "bindings-compile-" + name.replace("/", "-").removesuffix(".o")
            done = rec.run(cid, argv, u.directory)
            if done["exit_code"] != 0:
                raise native_cache.CompileFailed(f"{rel} (bindings)", done)
            counter["done"] += 1
            say(f"[{counter['done']}/{n}] {rel if g != 'extern' else 'nanobind ' + Path(rel).name} "
                f"({done['seconds']:.0f} s)")
            return native_cache._kept(rec, done, tmp, cache_dir(root) / f"objects-{key}")
        commands = native_cache.parallel(one, list(units.items()), jobs)
        return {"schema": "mlx-vjpcheck/bindings/1", "key": key, "configure_key": ckey,
                "commit": commit, "source": str(src), "extension": ext,
                "python": pre["python"], "python_version": pre["python_version"],
                "nanobind": pre["nanobind"], "flags_note": "the configure's flags without -flto",
                "units": {rel: g for rel, (g, _) in units.items()},
                "seconds": round(time.perf_counter() - t_start, 1), "commands": commands}
    path, meta, reused = native_cache.entry(cache_dir(root), f"objects-{key}", fill, fresh)
    if reused:
        native_cache.replay(rec, meta.get("commands", []))
    else:
        say(f"bindings and C++ test objects compiled in {time.perf_counter() - t_start:.0f} s "
            f"({_du(path) / 2**20:.0f} MiB)")
    return Bindings(path, key, units, ext, meta, reused)


def _sha(path: Path) -> str:
    try:
        return nb.sha256_file(path)
    except OSError:
        return "missing"


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())

#!/usr/bin/env python3
"""The gate's cost: one-time bindings build, cold, warm and changed-patch gates,
each beside what it cannot go below.

Usage: python bench/gate.py --mlx-source DIR --mlx-build DIR [--opt O0|as-built]
                            [--mlx-tests python,cpp|python|cpp|none] [--mlx-tests-filter P]
                            [--corpus-only] [--cold] [--repeat N]
       (defaults: $MLX_SOURCE_ROOT, $MLX_CPU_BUILD, --opt O0, every MLX test, 1 repeat)

Figures (each printed with its target):
* one-time bindings build (--cold only): MLX's Python bindings, nanobind and
  the C++ tests compiled into an empty cache (harness/gate/bindings.py):
  seconds and disk. Stated, no target.
* cold gate (--cold only): build_and_test.py into that empty cache (bindings,
  units, links, suites).
* warm gate, unchanged patch: build_and_test.py again; nothing is compiled or
  linked. Beside it, the suites alone: the same stages on the same cached
  builds, run directly (harness/gate/suites.run_suites), no run directory.
  Target: warm <= 1.2 x suites alone.
* changed patch, pristine cached: the patch with one more comment line in its
  first touched unit, so that unit is compiled again and the patched builds are
  linked again. Beside it the floor: compiling the touched units at the same
  flags two at a time plus the patched links (bindings, C++ tests, suite), run
  directly. Target: the gate's build phase (gate.json) <= 1.5 x floor; the
  whole changed-patch gate is also printed beside floor + suites alone.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.native import build as nb  # noqa: E402
from mlx_vjpcheck.gate import cache as native_cache  # noqa: E402
from mlx_vjpcheck.gate import inputs as GI  # noqa: E402
from mlx_vjpcheck.gate import build as GB  # noqa: E402
from mlx_vjpcheck.gate import suites as GS  # noqa: E402
from mlx_vjpcheck.gate import bindings as nbind  # noqa: E402
from mlx_vjpcheck.gate import patch as native_patch  # noqa: E402


def changed_patch(text: str, nonce: str) -> str:
    """`text` (one diff, or a series' combined text) with a comment line added after its
    first added line: that unit's patched text changes, nothing else does."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("+") and not ln.startswith("+++"))
    return "".join(lines[:at + 1] + [f"+// bench {nonce}\n"] + lines[at + 1:])


def gate_run(args, out: Path, patch: str, cache: str | None) -> tuple:
    """(seconds, gate.json) of one build_and_test.py."""
    argv = [sys.executable, str(ROOT / "build_and_test.py"), "--mlx-source", args.mlx_source,
            "--mlx-build", args.mlx_build, "--opt", args.opt, "--patch", patch, "--out", str(out),
            "--mlx-tests", args.mlx_tests, "--replace"]
    if args.mlx_tests_filter:
        argv += ["--mlx-tests-filter", args.mlx_tests_filter]
    if args.corpus_only:
        argv += ["--no-catalog", "--scenarios", str(ROOT / "harness" / "regressions")]
    if cache:
        argv += ["--cache", cache]
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"bench/gate.py: build_and_test.py exited {p.returncode}: "
                 f"{(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return took, json.loads((out / "gate.json").read_text())


def stages(args) -> tuple:
    chosen = [] if args.mlx_tests == "none" else [t.strip() for t in args.mlx_tests.split(",")]
    return ("harness", "native") + tuple(f"mlx-{t}" for t in ("python", "cpp") if t in chosen)


def prepared(args, patch, cache, work: Path):
    gate = GI.prepare(args.mlx_source, args.mlx_build, patch, args.opt, cache=cache, stages=stages(args),
                     mlx_tests_filter=args.mlx_tests_filter)
    gate.rec, gate.work = nb.Recorder(work / "rec"), work
    return gate


def suites_alone(args, patch, cache, work: Path) -> float:
    """The gate's stages on its cached builds, run directly: no compile, link or run dir."""
    gate = prepared(args, patch, cache, work)
    built = GB.build_variants(gate)   # all reused: the warm gate ran before
    from mlx_vjpcheck.cases import catalog, files
    entries = files.regressions() if args.corpus_only else \
        files.catalog_entries(catalog.catalog()) + files.regressions()
    from mlx_vjpcheck.native import suite as native_suite
    inp = native_suite.write_input([e.scenario for e in entries], work / "scenarios.json")
    rec = nb.Recorder(work / "native-rec")
    t0 = time.perf_counter()
    GS.run_suites(gate, built, inp, rec)
    return time.perf_counter() - t0


def floor(args, patch, cache, work: Path) -> tuple:
    """(compile s, link s): the touched units compiled from the patched text, two at a time,
    with the gate's flags, then the patched links, run directly."""
    gate = prepared(args, patch, cache, work)
    gate.headers = GB._headers(gate.project, gate.src)
    gate.bindings = nbind.ensure(gate.cache_root, gate.src, gate.build, gate.commit, gate.rec,
                                   lambda m: None, 2, False, gate.prerequisites or None, gate.headers)
    objs = {}

    def one(rel):
        u = gate.unit(rel)
        src = work / "src" / Path(rel).name
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(gate.touched[rel][1], encoding="utf-8")
        objs[rel] = work / f"{GB._stem(rel)}.o"
        return gate.rec.run(f"floor-{GB._stem(rel)}", [u.compiler, *nb.with_opt(u.flags, gate.opt), "-iquote",
                            str((gate.src / rel).parent), "-c", src, "-o", objs[rel]], u.directory)
    t0 = time.perf_counter()
    done = native_cache.parallel(one, gate.compiled, 2)
    compile_s = time.perf_counter() - t0
    suite = GB.suite_objects(gate)
    first, libs = gate.first_unit, [str(gate.archive), *gate.libraries]
    mlx_objs = [str(objs[r]) for r in gate.compiled if gate.unit_group(r) == "mlx"]
    links = [[first.compiler, "-shared", "-o", work / "core.so", *gate.bindings.objects("core"), *mlx_objs,
              *gate.bindings.objects("extern"), *libs],
             [first.compiler, "-o", work / "tests", *gate.bindings.objects("tests"), *mlx_objs, *libs],
             [first.compiler, "-o", work / "suite", *suite, *mlx_objs, *libs]]
    if "mlx-cpp" not in gate.stages:
        links.pop(1)
    t0 = time.perf_counter()
    done += native_cache.parallel(lambda a: gate.rec.run(f"floor-link-{len(a)}", a, work), links, 2)
    link_s = time.perf_counter() - t0
    if any(d["exit_code"] for d in done):
        sys.exit("bench/gate.py: a floor compile or link failed")
    return compile_s, link_s


def disk(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file() and not p.is_symlink())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlx-source", default=os.environ.get("MLX_SOURCE_ROOT"))
    ap.add_argument("--mlx-build", default=os.environ.get("MLX_CPU_BUILD"))
    ap.add_argument("--patch", default=str(GI.DEFAULT_PATCH))
    ap.add_argument("--opt", choices=("O0", "as-built"), default="O0")
    ap.add_argument("--mlx-tests", default="python,cpp")
    ap.add_argument("--mlx-tests-filter", default=None)
    ap.add_argument("--cold", action="store_true", help="also measure the one-time bindings build and a cold gate")
    ap.add_argument("--corpus-only", action="store_true",
                    help="the harness stage runs the regression corpus only (--no-catalog --scenarios "
                         "harness/regressions): a quick measurement of the gate's own overhead")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    if not (args.mlx_source and args.mlx_build):
        ap.error("give --mlx-source and --mlx-build (or set MLX_SOURCE_ROOT and MLX_CPU_BUILD)")
    print(f"cpus: {os.cpu_count()}  opt: {args.opt}  mlx tests: {args.mlx_tests}"
          f"{'  harness: regression corpus only' if args.corpus_only else ''}"
          f"{' (filter ' + args.mlx_tests_filter + ')' if args.mlx_tests_filter else ''}  "
          f"load average: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as t:
        tmp = Path(t)
        cache = None
        if args.cold:
            cache = str(tmp / "cache")
            gate = prepared(args, args.patch, cache, tmp / "cold-bindings")
            gate.headers = GB._headers(gate.project, gate.src)
            t0 = time.perf_counter()
            nbind.ensure(gate.cache_root, gate.src, gate.build, gate.commit, gate.rec,
                           lambda m: None, gate.jobs, False, gate.prerequisites or None, gate.headers)
            one_time = time.perf_counter() - t0
            size = disk(Path(cache) / nbind.ROOT_NAME)
            print(f"one-time bindings build (configure + {len(json.loads(next((Path(cache) / nbind.ROOT_NAME).glob('objects-*/meta.json')).read_text())['units'])} objects): "
                  f"{one_time:.0f} s, {size / 2**20:.1f} MiB", flush=True)
            cold, _ = gate_run(args, tmp / "cold", args.patch, cache)
            print(f"cold gate (bindings cached, units, links and suites from scratch): {cold:.1f} s", flush=True)
        else:
            gate_run(args, tmp / "prime", args.patch, cache)   # fills the cache; untimed
        warm = [gate_run(args, tmp / f"warm{i}", args.patch, cache) for i in range(args.repeat)]
        alone = [suites_alone(args, args.patch, cache, tmp / f"alone{i}") for i in range(args.repeat)]
        w, a = statistics.median(x for x, _ in warm), statistics.median(alone)
        print(f"warm gate, unchanged patch: {w:.1f} s (build phase {statistics.median(g['seconds']['build'] for _, g in warm):.2f} s); "
              f"suites alone: {a:.1f} s; ratio {w / a:.2f} (target <= 1.2)", flush=True)
        stamp = f"{os.getpid()}-{time.time_ns()}"
        changed, floors = [], []
        for i in range(args.repeat):
            p = tmp / f"patch-{i}.diff"
            p.write_text(changed_patch(native_patch.read(args.patch)[0], f"{stamp}-{i}"))
            changed.append(gate_run(args, tmp / f"changed{i}", str(p), cache))
            q = tmp / f"patch-floor-{i}.diff"
            q.write_text(changed_patch(native_patch.read(args.patch)[0], f"{stamp}-floor-{i}"))
            floors.append(floor(args, str(q), cache, tmp / f"floor{i}"))
        c = statistics.median(x for x, _ in changed)
        cb = statistics.median(g["seconds"]["build"] for _, g in changed)
        fc = statistics.median(f[0] for f in floors)
        fl = statistics.median(f[1] for f in floors)
        print(f"changed patch, pristine cached: gate {c:.1f} s, its build phase {cb:.1f} s; floor: compile "
              f"{fc:.1f} s + link {fl:.1f} s = {fc + fl:.1f} s; build phase / floor {cb / (fc + fl):.2f} "
              f"(target <= 1.5); gate / (floor + suites alone) {c / (fc + fl + a):.2f}", flush=True)
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The two builds of a gate: pristine and patched, each linked ahead of `libmlx.a`.

For each variant: the touched translation units compiled from their pristine
or patched text (one cache entry per unit and text: a gate of an unchanged
patch compiles nothing, a changed patch recompiles only the units whose text
changed), then, linked once per set of objects and cached:

* `mlx/` — an importable MLX package: the checkout's `python/mlx` sources (with
  the patch applied where it touches them) beside the extension module linked
  from the cached bindings objects (bindings.py), the unit objects and the archive;
* `bin/tests` — MLX's C++ test binary (doctest), linked the same way;
* `bin/vjpcheck-native` — this project's C++ suite (native/), linked the same way.

Link order: every object first (bindings or tests or suite, then the units), then
`libmlx.a`, then its libraries. An archive member is only pulled in for a symbol
still undefined, and the unit objects define every symbol of their unit, so the
archive's copy of a touched unit is never used; if it were pulled (a symbol the
pristine unit has and the patched one lacks) the link would stop at a duplicate
definition instead of mixing the two. A build is therefore proof that only the
given unit objects were used (native/README.md has the argument in full).
"""
from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core.exits import exit_text
from ..native import build as nb
from . import cache as native_cache
from . import headers as nh

BUILDS = "mlx-builds"
PARTS = ("package", "tests", "suite")


@dataclass
class Variant:
    """One linked build of a gate: each part is its own cache entry."""
    name: str                    # "pristine" or "patched"
    parts: dict                  # part -> its cache entry (a subset of PARTS)
    keys: dict                   # part -> cache key
    reused: bool = False         # every part came from the cache

    @property
    def key(self) -> str:
        return "+".join(f"{p}:{k}" for p, k in sorted(self.keys.items()))

    @property
    def path(self) -> Path:
        """The package's entry (else the first part's): what a child's mlx must come from."""
        return self.parts.get("package") or next(iter(self.parts.values()))

    @property
    def package_parent(self) -> Path:
        """The folder to put first on PYTHONPATH: it holds `mlx/`."""
        return self.parts["package"] / "python"

    @property
    def tests_binary(self) -> Path:
        return self.parts["tests"] / "bin" / "tests"

    @property
    def suite_binary(self) -> Path:
        return self.parts["suite"] / "bin" / "vjpcheck-native"


def stem(rel: str) -> str:
    return rel.replace("/", "_").replace(".", "_")


def unit_object(gate, variant: str, rel: str, text: str, unit, headers: dict | None = None) -> Path:
    """One unit compiled from `text` (its pristine or patched version), cached by (unit,
    text, compiler, flags after --opt, the library's headers, the patched headers). With
    `headers` ({rel: patched text}) it compiles against them (headers.py: an overlay first
    on the include path) and is refused when it still read a checkout copy of one."""
    flags = nb.with_opt(unit.flags, gate.opt)
    src_dir = str((gate.src / rel).parent) if not os.path.isabs(rel) else str(Path(rel).parent)
    key = "unit-" + stem(rel)[-40:] + "-" + native_cache.digest(
        "unit/1", rel, text, unit.compiler, flags, unit.directory, src_dir,
        native_cache.compiler_version(unit.compiler), gate.headers, *([headers] if headers else []))
    name = Path(rel).name
    cid = f"compile-{variant}-{stem(rel)}"

    def fill(tmp: Path) -> dict:
        copy = tmp / "src" / name
        copy.parent.mkdir(parents=True)
        copy.write_text(text, encoding="utf-8")
        first = nh.overlay_flags(nh.write_overlay(tmp, headers), tmp / "unit.d") if headers else []
        # -iquote: quoted includes relative to the original file resolve as in the checkout.
        argv = [unit.compiler, *first, *flags, "-iquote", src_dir, "-c", str(copy), "-o", str(tmp / "unit.o")]
        done = gate.rec.run(cid, argv, unit.directory)
        if done["exit_code"] != 0:
            raise native_cache.CompileFailed(f"{variant} {rel}", done)
        stale = nh.pristine_reads(tmp / "unit.d", unit.directory, gate.src, headers) if headers else []
        if stale:
            raise nb.StepFailed(f"{variant} {rel} still reads the checkout's {', '.join(stale)} (included "
                                "relative to its includer's directory, which the overlay cannot shadow)")
        kept = native_cache._kept(gate.rec, done, tmp, Path(gate.cache) / key)
        return {"schema": "mlx-vjpcheck/unit/1", "unit": rel, "variant_first_built_as": variant,
                "commands": [kept], **({"headers": sorted(headers)} if headers else {})}
    path, meta, reused = native_cache.entry(gate.cache, key, fill, gate.fresh)
    if reused:
        for cmd in meta.get("commands", []):
            gate.rec.replay(cid, cmd)
    return path / "unit.o"


def _link(gate, cid: str, argv: list, what: str) -> dict:
    done = gate.rec.run(cid, argv, gate.work)
    if done["exit_code"] != 0:
        raise nb.StepFailed(f"linking {what} failed ({exit_text(done['exit_code'], 'exit')}): "
                            f"see {{out}}/{done['stderr']}")
    return done


def _copy_python_sources(src: Path, dest: Path, patched: dict) -> None:
    """The checkout's python/mlx (no compiled leftovers), with patched files replaced."""
    shutil.copytree(src / "python" / "mlx", dest, ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", "*.pyd", "*.dylib", "*.pyc"))
    for rel, text in patched.items():
        (dest / Path(rel).relative_to("python/mlx")).write_text(text, encoding="utf-8")


def shared_flags() -> list:
    return ["-shared", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" else ["-shared"]


def link_variant(gate, variant: str, objects: dict, parts: tuple, bindings=None,
                 suite_objs: list | None = None) -> Variant:
    """The variant's package and binaries, each linked now or reused. `objects`: touched
    unit -> its object for this variant; `parts`: which of PARTS to build."""
    mlx_objs = [o for rel, o in objects.items() if gate.unit_group(rel) == "mlx"]
    replace = {rel: o for rel, o in objects.items() if gate.unit_group(rel) in ("core", "tests", "extern")}
    py_patched = {rel: texts[1] if variant == "patched" else texts[0]
                  for rel, texts in gate.touched.items() if gate.unit_group(rel) == "python"}
    first = gate.first_unit
    link_flags = nb.link_passthrough(first.flags)
    archive = [str(gate.archive), *gate.libraries]
    plans = {}
    if "package" in parts and bindings is not None:
        plans["package"] = (lambda out: [first.compiler, *shared_flags(), *link_flags, "-o", out,
                                         *bindings.objects("core", replace), *mlx_objs,
                                         *bindings.objects("extern", replace), *archive],
                            Path("python") / "mlx" / bindings.extension, f"link-{variant}-bindings",
                            f"the {variant} MLX extension module",
                            [bindings.key, py_patched, native_cache.tree_digest(gate.src / "python" / "mlx", "*.py")])
    if "tests" in parts and bindings is not None:
        plans["tests"] = (lambda out: [first.compiler, *link_flags, "-o", out,
                                       *bindings.objects("tests", replace), *mlx_objs, *archive],
                          Path("bin") / "tests", f"link-{variant}-mlx-tests", f"the {variant} MLX C++ tests",
                          [bindings.key])
    if "suite" in parts and suite_objs:
        plans["suite"] = (lambda out: [first.compiler, *link_flags, "-o", out, *suite_objs, *mlx_objs, *archive],
                          Path("bin") / "vjpcheck-native", f"link-{variant}", f"the {variant} native suite",
                          [[str(s) for s in suite_objs]])
    root = gate.builds_root

    # The unit objects standing in for the bindings' or tests' own that each part links (and
    # so its key holds): the extension links the core and extern groups, the C++ tests the
    # tests group, the suite neither. A unit another part links (a C++ test recompiled
    # against a patched header) must not change this part's key: a gate without the C++
    # tests would relink the same package.
    linked = {"package": ("core", "extern"), "tests": ("tests",), "suite": ()}

    def one(part):
        argv_of, rel_out, cid, what, extra = plans[part]
        own = sorted((k, str(v)) for k, v in replace.items() if gate.unit_group(k) in linked[part])
        key = f"{variant}-{part}-" + native_cache.digest(
            "variant/2", part, [str(o) for o in mlx_objs], own,
            gate.archive_sha256, gate.libraries, first.compiler, link_flags, extra)
        final = root / key

        def fill(tmp: Path) -> dict:
            out = tmp / rel_out
            out.parent.mkdir(parents=True, exist_ok=True)
            if part == "package":
                shutil.rmtree(out.parent)
                _copy_python_sources(gate.src, out.parent, py_patched)
            done = _link(gate, cid, argv_of(out), what)
            return {"schema": "mlx-vjpcheck/variant/2", "variant": variant, "part": part,
                    "commands": [native_cache._kept(gate.rec, done, tmp, final)]}
        path, meta, reused = native_cache.entry(root, key, fill, gate.fresh)
        if reused:
            native_cache.replay(gate.rec, meta.get("commands", []))
        return part, path, key, reused
    done = native_cache.parallel(one, sorted(plans), gate.jobs)
    return Variant(variant, {p: path for p, path, _, _ in done}, {p: k for p, _, k, _ in done},
                   all(r for *_, r in done))

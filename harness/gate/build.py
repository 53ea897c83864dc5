"""The gate's two builds: the touched units compiled pristine and patched with their
exact flags (and, patched, every unit including a touched header), MLX's Python
bindings and C++ tests compiled once per checkout (bindings.py), the C++ suite's
objects, and the links of each build ahead of the static library (variants.py).
Everything compiled or linked is cached per text and flags (cache.py).
"""
from __future__ import annotations

import time
from pathlib import Path

from ..native import build as nb
from ..native.build import Project
from . import bindings as nbind
from . import cache as native_cache
from . import headers as nheaders
from . import variants as nvar
from .inputs import VARIANTS, Gate, StepFailed, _say

def _headers(project: Project, src: Path) -> str:
    """The library headers every object here compiles against."""
    return native_cache.tree_digest(src / Path(project.marker).parts[0], "*.h")


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
        gate.bindings = _bindings(gate)
    gate.header_units = resolve_header_units(gate)
    if gate.header_units:
        _say(gate, f"headers {', '.join(gate.header_texts)}: {len(gate.header_units)} units including them "
                   "are recompiled for the patched build")
    objs = unit_objects(gate)
    suite = _suite_by_variant(gate)
    parts = tuple(p for p, s in (("package", "harness"), ("package", "mlx-python"), ("tests", "mlx-cpp"),
                                 ("suite", "native")) if s in gate.stages)
    built = {v: nvar.link_variant(gate, v, objs[v], tuple(dict.fromkeys(parts)), gate.bindings, suite[v])
             for v in VARIANTS}
    _say(gate, "builds: " + ", ".join(f"{v} {'reused' if b.reused else 'linked'}" for v, b in built.items())
         + f" ({time.perf_counter() - t0:.1f} s)")
    return built


def _bindings(gate: Gate) -> nbind.Bindings:
    try:
        return nbind.ensure(gate.cache_root, gate.src, gate.build, gate.commit, gate.rec,
                            gate.say or (lambda m: None), gate.jobs, gate.fresh,
                            gate.prerequisites or None, gate.headers)
    except nbind.BindingsError as e:
        raise StepFailed(str(e))


def _suite_by_variant(gate: Gate) -> dict:
    """{variant: the C++ suite's objects | None}: patched against the patched headers
    when the patch touches one."""
    if "native" not in gate.stages:
        return {v: None for v in VARIANTS}
    suite = dict.fromkeys(VARIANTS, suite_objects(gate))
    if gate.header_texts:
        suite["patched"] = suite_objects(gate, nheaders.write_overlay(gate.work, gate.header_texts))
    return suite

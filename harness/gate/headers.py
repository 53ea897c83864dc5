"""Patches to headers: which translation units include a header, and how a unit is
compiled against the patched header while the checkout stays untouched.

A header has no object of its own: its change reaches the program through every
unit that includes it, directly or through other headers. The gate therefore
recompiles, in the patched variant only, every unit whose dependencies name a
touched header (libmlx's units, and MLX's bindings and C++ test units when they
include it); the pristine variant keeps the archive's objects as built.

Where the dependencies come from, in this order:
* the build's own dependency files: Make-style `*.d` files beside the objects
  (`target: source header ...`), or Ninja's log (`ninja -t deps`): the first
  prerequisite of each object is its source;
* otherwise the compiler itself (`-MM` with the unit's exact flags), cached per
  unit, flags, source text and headers.

The patched header is not written into the checkout: it goes into an overlay
directory put first on the include path (`-I overlay`), so `#include
"mlx/primitives.h"` and `<mlx/primitives.h>` both find it before the checkout's
copy. A header included by a path relative to its includer's own directory would
still find the checkout's copy, so every patched compile writes its dependency
file and is refused when it read the pristine copy of a touched header.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

from . import cache as native_cache

HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".inl", ".ipp")
OVERLAY = "overlay"


class HeaderError(RuntimeError):
    """A header change the gate cannot apply faithfully (one line, naming the file)."""


def is_header(rel: str) -> bool:
    return rel.endswith(HEADER_SUFFIXES)


# --- reading dependency lists -------------------------------------------------------------

def parse_make_deps(text: str) -> dict:
    """{target: [prerequisites]} of a Make-style dependency file (line continuations,
    escaped spaces, several rules, phony `header:` rules from -MP)."""
    text = text.replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        if ":" not in line or line.startswith("#"):
            continue
        m = re.match(r"^((?:[^:\\]|\\.)+|[A-Za-z]:[^:]*):(.*)$", line.strip())
        if not m:
            continue
        target = m.group(1).strip().replace("\\ ", " ")
        prereqs = [p.replace("\\ ", " ") for p in re.split(r"(?<!\\)\s+", m.group(2).strip()) if p]
        if prereqs:
            out.setdefault(target, []).extend(prereqs)
    return out


def parse_ninja_deps(text: str) -> dict:
    """{object: [dependencies]} of `ninja -t deps` output (an object line, then its
    dependencies indented, the source first)."""
    out, current = {}, None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            current = line.split(":", 1)[0].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line.strip())
    return out


def _under(path: str, directory: str, root: str) -> str | None:
    """`path` (relative to the compile's directory) as a path relative to root, or None."""
    real = os.path.realpath(os.path.join(directory, path))
    return os.path.relpath(real, root) if real.startswith(root + os.sep) else None


def from_build(build: Path, src: Path) -> dict:
    """{unit rel: set(rel paths under src it depends on)} from the build's dependency
    files (Make-style *.d, else Ninja's log); units it says nothing about are absent."""
    root = os.path.realpath(src)
    lists = []
    for d in sorted(Path(build).rglob("*.d")):
        try:
            rules = parse_make_deps(d.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        lists += [(str(d.parent), prereqs) for prereqs in rules.values()]
    if not lists and (Path(build) / ".ninja_deps").is_file():
        lists = [(str(build), deps) for deps in parse_ninja_deps(_ninja_deps(build)).values()]
    out = {}
    for directory, deps in lists:
        # a Make rule's paths are relative to where the compiler ran: the build directory
        # for CMake; try the file's own directory too
        rels = [_under(p, str(build), root) or _under(p, directory, root) for p in deps]
        if rels and rels[0] and not is_header(rels[0]):
            out.setdefault(rels[0], set()).update(r for r in rels[1:] if r)
    return out


def _ninja_deps(build: Path) -> str:
    try:
        p = subprocess.run(["ninja", "-C", str(build), "-t", "deps"], capture_output=True, text=True)
    except OSError:
        return ""
    return p.stdout if p.returncode == 0 else ""


def generated_inputs(build: Path, src: Path) -> dict:
    """{rel header: generated file} for headers a build rule other than a compile turns
    into a source (MLX's CPU JIT preamble): a patch to them changes a generated file
    the gate does not regenerate."""
    ninja = Path(build) / "build.ninja"
    if not ninja.is_file():
        return {}
    root, out = os.path.realpath(src), {}
    for m in re.finditer(r"^build ([^:|]+?)(?: \|[^:]*)?: CUSTOM_COMMAND (.*)$",
                         ninja.read_text(encoding="utf-8", errors="replace"), re.M):
        for word in m.group(2).split():
            rel = _under(word, str(build), root)
            if rel and is_header(rel):
                out.setdefault(rel, m.group(1).strip())
    return out


def scan(unit, rel: str, src: Path, cache_root: Path, headers_digest: str) -> set:
    """The headers under src that `rel` includes, as its compiler sees them with its
    exact flags (-MM), cached per unit, flags, source text and headers."""
    path = Path(rel) if os.path.isabs(rel) else Path(src) / rel
    text = path.read_bytes()
    key = "deps-" + native_cache.digest("deps/1", rel, text, unit.compiler, list(unit.flags),
                                       unit.directory, headers_digest)

    def fill(tmp: Path) -> dict:
        argv = [unit.compiler, *unit.flags, "-MM", str(path)]
        p = subprocess.run(argv, cwd=unit.directory, capture_output=True, text=True)
        if p.returncode != 0:
            line = (p.stderr.strip().splitlines() or ["no output"])[0]
            raise HeaderError(f"cannot list the headers {rel} includes ({shlex.join(argv[:1])} -MM: {line[:200]})")
        deps = [d for ds in parse_make_deps(p.stdout).values() for d in ds]
        root = os.path.realpath(src)
        return {"deps": sorted({r for d in deps if (r := _under(d, unit.directory, root))} - {rel})}
    entry, meta, _ = native_cache.entry(Path(cache_root) / "native-objects", key, fill)
    return set(meta["deps"])


def includers(touched_headers, deps: dict) -> list:
    """The units (keys of deps) that depend on any of the touched headers, sorted."""
    want = set(touched_headers)
    return sorted(u for u, ds in deps.items() if want & set(ds))


# --- compiling against the patched headers --------------------------------------------------

def write_overlay(root: Path, texts: dict) -> Path:
    """The patched headers at their relative paths under root/overlay."""
    overlay = Path(root) / OVERLAY
    for rel, text in texts.items():
        dest = overlay / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
    return overlay


def overlay_flags(overlay: Path, depfile: Path) -> list:
    """Put before the unit's own flags: the overlay searched first, a dependency file written."""
    return ["-I", str(overlay), "-MD", "-MF", str(depfile)]


def pristine_reads(depfile: Path, directory: str, src: Path, texts: dict) -> list:
    """The touched headers whose checkout (pristine) copy a patched compile read."""
    try:
        rules = parse_make_deps(Path(depfile).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return []
    root = os.path.realpath(src)
    read = {_under(d, directory, root) for ds in rules.values() for d in ds}
    return sorted(r for r in texts if r in read)


def summary(texts: dict, units: dict) -> dict:
    """What the evidence records: the touched headers and the units recompiled for them."""
    return {"headers": sorted(texts), "units": {g: sorted(r for r, gg in units.items() if gg == g)
                                                for g in sorted(set(units.values()))}}


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, sort_keys=True)

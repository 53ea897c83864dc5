"""What a diff claims to fix when nobody says: the functions of MLX's C++ sources its
hunks change, the primitives whose `vjp`, `jvp`, `vmap` or kernels (`eval_cpu`, ...)
those are (a helper the diff changes counts for every primitive method that calls it),
and the catalog ops whose records name those primitives (OpInfo.primitives). The gate
holds the defect classes of those ops that the patch visibly acts on (judging/
gate_verdict.inferred_claims); a manifest's claims are read beside these, not instead.

Plain text scanning of clang-formatted C++ (MLX's style: a definition starts at column 0
and its body ends at a `}` in column 0); no compiler involved, and no MLX code imported.
"""
from __future__ import annotations

import difflib
import re

# The methods of a primitive that decide a gradient rule or a forward value.
METHODS = ("vjp", "jvp", "vmap", "eval_cpu", "eval_gpu", "eval")
SOURCES = re.compile(r"^mlx/.*\.cpp$")
# a column-0 line naming a function: its (qualified) name right before the first "("
_START = re.compile(r"^(?!(?:namespace|template|using|typedef|struct|class|enum|static_assert|return|#|//|/\*)\b)"
                    r"(?=[A-Za-z_])(?:[^;(=]*?[\s*&>])?((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*)\s*\(")


def definitions(text: str) -> list:
    """[(name, first line, last line)] (0-based, inclusive) of the function definitions
    in a C++ source: from a column-0 line naming a function whose body opens before any
    `;`, to the next `}` in column 0."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        m = _START.match(lines[i])
        if not m:
            i += 1
            continue
        j = i
        while j < len(lines) and "{" not in lines[j] and ";" not in lines[j]:
            j += 1
        if j >= len(lines) or ";" in lines[j].split("{")[0]:
            i = j + 1   # a declaration, not a definition
            continue
        end = j if lines[j].rstrip().endswith("}") and lines[j].count("{") == lines[j].count("}") else \
            next((k for k in range(j + 1, len(lines)) if lines[k].startswith("}")), len(lines) - 1)
        out.append((m.group(1), i, end))
        i = end + 1
    return out


def _enclosing(defs: list, line: int) -> str | None:
    return next((name for name, a, b in defs if a <= line <= b), None)


def changed_functions(original: str, patched: str) -> list:
    """The functions whose text a change to one file touches: every removed line's
    enclosing definition in the original, every added line's in the patched text."""
    a, b = original.splitlines(), patched.splitlines()
    da, db = definitions(original), definitions(patched)
    out = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        out |= {_enclosing(da, k) for k in range(i1, i2)} | {_enclosing(db, k) for k in range(j1, j2)}
    return sorted(n for n in out if n)


def _bodies(text: str) -> dict:
    lines = text.splitlines()
    return {name: "\n".join(lines[a:b + 1]) for name, a, b in definitions(text)}


def _method(name: str):
    """(class, method) of a qualified name `Class::method` whose method is one of METHODS."""
    parts = name.split("::")
    return (parts[-2], parts[-1]) if len(parts) >= 2 and parts[-1] in METHODS else None


def reached(touched: dict) -> dict:
    """{"name": [where]} of every function a patch changes in mlx/**/*.cpp (`touched`
    {rel: (original, patched)}), and of every function of the same file that calls a
    changed one that is not a primitive method, directly or through other such helpers
    (where: "rel: name", "(calls a changed helper)" for the callers)."""
    out = {}
    for rel, (original, patched) in sorted(touched.items()):
        if not SOURCES.match(rel) or original == patched:
            continue
        changed = changed_functions(original, patched)
        bodies = _bodies(patched)
        seen, frontier = set(changed), [n for n in changed if not _method(n)]
        while frontier:   # callers of changed helpers, to a fixpoint
            short = frontier.pop().split("::")[-1]
            call = re.compile(rf"\b{re.escape(short)}\s*[(<]")
            for name, body in bodies.items():
                if name not in seen and call.search(body.split("{", 1)[-1]):
                    seen.add(name)
                    if not _method(name):
                        frontier.append(name)
        for name in sorted(seen):
            out.setdefault(name, []).append(f"{rel}: {name}" + ("" if name in changed else
                                                                 " (calls a changed helper)"))
    return out


def primitive_methods(touched: dict, primitives) -> dict:
    """{"Class::method": [where]} for the primitives (class names in `primitives`) whose
    METHODS the patch changes, itself or through a helper they call."""
    primitives = set(primitives)
    return {f"{cm[0]}::{cm[1]}": how for name, how in reached(touched).items()
            if (cm := _method(name)) and cm[0] in primitives}


def inferred_ops(touched: dict, records) -> dict:
    """{op: ["Class::method" or "function", ...]}: the catalog ops whose record names a
    primitive whose methods the patch changes, or whose name is the name of a changed
    function (MLX's op functions, mlx/ops.cpp: `hadamard_transform`). `records`: OpInfo
    records (name, primitives, has_vjp)."""
    records = [r for r in records if r.has_vjp]
    found = reached(touched)
    methods = [m for n in found if (m := _method(n))]
    free = {n.split("::")[-1] for n in found if "::" not in n or not _method(n)}
    out = {}
    for r in records:
        hit = sorted({f"{c}::{m}" for c, m in methods if c in r.primitives} | ({r.name} & free))
        if hit:
            out[r.name] = hit
    return out


def infer(touched: dict, records) -> dict:
    """gate.json's "inferred" record: the primitive methods and op functions the patch
    changes (each with where), and the ops they map to."""
    records = list(records)
    ops = inferred_ops(touched, records)
    hits = {h for v in ops.values() for h in v}
    return {"functions": {n: how for n, how in reached(touched).items()
                          if (f"{c[0]}::{c[1]}" if (c := _method(n)) else n.split("::")[-1]) in hits},
            "ops": ops}

"""A reproducer for a maintainer: a short standalone script (mlx + numpy +
the standard library) in the form of the defect report's own: literal
inputs, the one MLX call, what MLX gives against the float64 rule's values
as literals, the rule in a comment, and the bisect exit codes (0 defect
absent, 1 present, 125 cannot test; `--device gpu` runs it on the GPU).

The call is the op's one MLX call for the scenario's params, written out by
the op record's `call_expression` (tests/cases/test_reproducers.py holds it to
the harness's own call); an op without one, or params it cannot write as one
expression, embed the op's MLX call file (harness/ops/repro/) as text: either
way the script runs exactly what the harness ran. The expected values come
from the harness's float64 reference when the script is written; the
general machinery stays in the harness, not in the script.

A finding under a transform (`transform`: "second_order", "vmap",
"forward_mode", "compile") performs that transform on the one MLX call the
way the harness's oracle does (its module in harness/oracles/, which holds
the script's fragment) and compares with the
float64 values of the same quantity (cases/expected.py: H u and J u along a
literal direction u, -2 g for vmap's second example); the transform raising
where the plain VJP (for vmap: the mapped forward) works is "defect present",
and both raising is "cannot test". "forward" checks the forward alone (a
finding the VJP is not involved in). `hang`: the script runs that measurement
in child processes, HANG_RUNS times with a timeout each, and a child that does
not finish is "defect present" (a defect that spins in some processes only).

A fuzz finding named after a transform oracle gets that transform, along the
direction its record holds, and an "absent" verdict that says what the fuzzer
saw (`finding_options`, shared with the validator, which writes it again).
"""
from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np

from .. import oracles
from ..core import checks, layout, opinfo
from ..oracles import directions, exact_zero
from . import expected as expected_mod

ALLOWED_IMPORTS = {"mlx", "numpy", "math", "itertools", "functools"}
RESERVED = {"mx", "np", "os", "sys", "subprocess", "params", "f", "y", "g", "grads", "got", "want", "ok",
            "bad", "gpu", "rc", "mlx_call", "have", "name", "w", "e"}

HEAD = '''#!/usr/bin/env python3
"""{doc}
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
{imports}{isolate}try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)
'''

PRELUDE = '''

def f({wrt}):
    return {expression}


{inputs}
g = {cotangent}
# the float64 rule: {rule}{how}
want = {{{want}}}
try:
    mx.eval(f({wrt}))
except Exception as e:
    sys.exit(print("cannot test: the forward raised", e) or 125)
'''

# What MLX gives, as the dict `got` (keys in `want`'s order): the plain VJP, the forward
# alone, and each transform oracle's own (its module's Repro.measure).
MEASURE = {
    "": '''try:
    (y,), grads = mx.vjp(f, [{wrt}], [g])
    mx.eval(got := dict(zip(want, [y, *grads])))
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the VJP raised {{type(e).__name__}}: {{e}})") or {present})
''',
    "forward": '''try:
    mx.eval(got := {{"forward": f({wrt})}})
except Exception as e:
    sys.exit(print(f"VERDICT: defect present (the forward raised {{type(e).__name__}}: {{e}})") or {present})
''',
}
FALLBACK = '''    try:   # the transform's fault only where the call works without it
        mx.eval({plain})
    except Exception as e2:
        sys.exit(print("cannot test: without the transform it raises too:", e2) or 125)
    sys.exit(print(f"VERDICT: defect present ({transform} raised {{type(e).__name__}}: {{e}})") or {present})
'''
# The oracles whose findings the script shows only under that oracle's transform, by name:
# a first-order script of such a finding prints "defect absent".
FRAGMENTS = {o.name: o.repro for o in oracles.BUILT_IN if o.repro is not None}
MEASURE.update({name: r.measure for name, r in FRAGMENTS.items()})
TRANSFORMS = tuple(MEASURE)

COMPARE = '''have = {{name: {have} for name, x in got.items()}}
bad = [name for name, w in want.items() if not ({close}{exact_test})]   # {agree}{exact_note}
for name, w in want.items():
    print(f"{{name}}: MLX {{have[name].tolist()}}, float64 rule {{w.tolist()}}", "DIFFERS" if name in bad else "ok")
sys.exit(print("VERDICT: defect " + (f"present ({{', '.join(bad)}} differ)" if bad else {absent})) or {codes})
'''

ISOLATE = '''
# MLX runs in a child that answers 10 (absent) or 11 (present): any other end of it,
# a signal or even exit(0) from inside MLX, means the VJP killed the process.
if os.environ.get("REPRO_CHILD") != "1":
    rc = subprocess.run([sys.executable, *sys.argv], env={**os.environ, "REPRO_CHILD": "1"}).returncode
    sys.exit({10: 0, 11: 1, 125: 125}.get(rc) if rc in (10, 11, 125) else
             print(f"VERDICT: defect present (MLX ended the process: status {rc})") or 1)

'''
HANG = '''
# MLX runs in {runs} children, one after another, each answering 10 (absent) or 11 (present):
# one that does not finish in {timeout} s, or ends any other way, means the defect is present.
if os.environ.get("REPRO_CHILD") != "1":
    for run in range({runs}):
        try:
            rc = subprocess.run([sys.executable, *sys.argv], env={{**os.environ, "REPRO_CHILD": "1"}},
                                timeout={timeout}).returncode
        except subprocess.TimeoutExpired:
            sys.exit(print(f"VERDICT: defect present (child {{run + 1}} of {runs} hung)") or 1)
        if rc != 10:
            sys.exit({{11: 1, 125: 125}}.get(rc) or print(f"VERDICT: defect present (status {{rc}})") or 1)
    sys.exit(print("VERDICT: defect absent (every child finished)") or 0)

'''
HANG_RUNS, HANG_TIMEOUT_S = 8, 20
HAVE_REAL = "np.array(x.astype(mx.float32), dtype=np.float64)"
HAVE_COMPLEX = "np.array(x.astype(mx.complex64 if x.dtype == mx.complex64 else mx.float32))"
CLOSE = "have[name].shape == w.shape and np.allclose(have[name], w, rtol={rtol!r}, atol={atol!r}, equal_nan=True)"
AGREE = "|MLX - rule| <= atol + rtol |rule|, NaN matches NaN"


class NotReproducible(ValueError):
    """The scenario cannot be written as a standalone reproducer (one line)."""


def literal(arr) -> str:
    """A float64 (or complex128) numpy literal, exact (shortest round-trip repr),
    non-finite spelled out."""
    a = np.asarray(arr)
    a = a.astype(np.complex128) if np.iscomplexobj(a) else a.astype(np.float64)
    flat = ", ".join(_scalar(v) for v in a.ravel())
    return f"np.array([{flat}]).reshape({tuple(int(d) for d in a.shape)})"


def _scalar(v) -> str:
    if isinstance(v, (complex, np.complexfloating)):
        return f"complex({_num(v.real)}, {_num(v.imag)})"
    return _num(v)


def _num(v: float) -> str:
    if math.isnan(v):
        return 'float("nan")'
    if math.isinf(v):
        return 'float("inf")' if v > 0 else '-float("inf")'
    return repr(float(v)) if v != int(v) or abs(v) >= 1e16 else repr(int(v)) + ".0"


def _view(var: str, v: dict) -> str:
    op = v["op"]
    if op == "slice":
        spec = ", ".join(":".join(str(x) for x in s) for s in v["index"])
        return f"{var} = {var}[{spec}]"
    if op == "transpose":
        return f"{var} = mx.transpose({var}, {tuple(v['axes'])})"
    if op in ("reshape", "broadcast_to"):
        return f"{var} = mx.{op}({var}, {tuple(v['shape'])})"
    if op == "expand_dims":
        return f"{var} = mx.expand_dims({var}, {int(v['axis'])})"
    raise NotReproducible(f"view {op!r} has no reproducer form")


def _operand(var: str, t, integer: bool) -> list:
    if integer:
        vals = ", ".join(str(int(x)) for x in layout.logical(t, np.int64).ravel())
        shape = tuple(int(d) for d in layout.logical(t, np.int64).shape)
        return [f"{var} = np.array([{vals}], dtype=np.int64).reshape({shape})"]
    store = layout.storage(t, np.complex128 if t.dtype == "complex64" else np.float64)
    vals = ", ".join(_scalar(x) for x in store.ravel())
    # From a numpy array, as the harness hands operands over (host memory, then MLX's copy).
    host = {"complex64": "np.complex64", "float64": "np.float64"}.get(t.dtype, "np.float32")
    shape = tuple(int(d) for d in store.shape)
    lines = [f"{var} = mx.array(np.array([{vals}], dtype={host}).reshape({shape}), dtype=mx.{t.dtype})"]
    if t.views:   # storage evaluated first, so the views are real views onto it
        lines.append(f"mx.eval({var})")
        lines += [_view(var, v) for v in t.views]
    return lines


def _var(name: str) -> str:
    return f"{name}_" if name in RESERVED else name


def _foreign_imports(tree) -> list:
    out = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        out += [n for n in names if n.split(".")[0] not in ALLOWED_IMPORTS
                or (isinstance(node, ast.ImportFrom) and node.level)]
    return out


def call_source(info) -> str:
    """The op's MLX call as standalone source: its call file whole (ops/repro/, mlx,
    numpy and stdlib math only), or, where the call lives in a module that imports
    more (a plugin op), the call function alone, which must then use only mx and np."""
    path = Path(opinfo.source_file(info.mlx_call))
    text = path.read_text(encoding="utf-8")
    tree, attr = ast.parse(text), info.mlx_call.split(":")[1]
    alias = "" if attr == "mlx_call" else f"\n\n\nmlx_call = {attr}"
    if not _foreign_imports(tree):
        return f"# the MLX call, as the harness runs it ({path.name})\n\n" + _body_of(text).rstrip() + alias + "\n"
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == attr), None)
    if fn is None or _foreign_imports(fn):
        raise NotReproducible(f"{path.name}: {attr} is not a standalone function a reproducer can embed")
    return f"# the MLX call, as the harness runs it ({path.name})\n\n" + ast.get_source_segment(text, fn) + alias + "\n"


def _body_of(text: str) -> str:
    """The call file without its docstring and the imports the script already has."""
    tree = ast.parse(text)
    drop = set()
    for node in tree.body:
        doc = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node is tree.body[0]
        plain = isinstance(node, ast.Import) and [(a.name, a.asname) for a in node.names] in (
            [("mlx.core", "mx")], [("numpy", "np")])
        if doc or plain:
            drop.update(range(node.lineno, node.end_lineno + 1))
    lines = [ln for i, ln in enumerate(text.splitlines(), 1) if i not in drop]
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def render(s, *, title: str, description: str = "", exact: bool = False, isolate: bool = False,
           expected: dict | None = None, transform: str = "", hang: bool = False,
           direction_seed: int = directions.DIRECTION_SEED, absent: str = "absent") -> str:
    """The reproducer of bound scenario `s` (a plain VJP objective). `exact`: zeros
    of the rule must be exact zeros (a finding of the exact-zero oracle); `isolate`:
    run MLX in a child process (a finding where the process died); `expected`: the
    float64 values already computed for it (else computed here); `transform`: what
    is measured (module text; "" the plain VJP); `hang`: children with a timeout;
    `direction_seed`: the seed of u (second order, forward mode), the one the check
    that found the defect recorded; `absent`: the verdict's words where MLX agrees
    with the rule (they follow "VERDICT: defect ", and start with "absent")."""
    if s.objective != "vjp":
        raise NotReproducible(f"objective {s.objective!r} has no reproducer form")
    if transform not in TRANSFORMS:
        raise NotReproducible(f"transform {transform!r} has no reproducer form (one of {TRANSFORMS})")
    exp = _expected(s, expected)
    want, direction = _wanted(s, exp, transform, direction_seed)
    cplx = any(np.iscomplexobj(v) for v in exp.values()) or any(t.dtype == "complex64" for t in s.operands.values())
    atol, rtol = checks.tolerance(s.dtype)
    child = isolate or hang
    present, absent_code = (11, 10) if child else (1, 0)
    doc = "\n".join(t for t in (_one_line(title), _one_line(description or s.description)) if t)
    head = HEAD.format(doc=doc, imports="import os\nimport subprocess\nimport sys\n" if child else "import sys\n",
                       isolate=HANG.format(runs=HANG_RUNS, timeout=HANG_TIMEOUT_S) if hang else
                       ISOLATE if isolate else "")
    call, expression = _call(s)
    wrt = ", ".join(_var(n) for n in s.wrt)
    fragment = FRAGMENTS.get(transform)
    fields = dict(fragment.fields if fragment else (), wrt=wrt, present=present, arity=len(s.wrt) + 1,
                  transform=transform,
                  direction=", ".join(_direction(s, direction[n]) for n in s.wrt) if direction else "")
    fallback = FALLBACK.format(plain=fragment.plain.format(**fields) if fragment else "", **fields)
    prelude = PRELUDE.format(
        inputs="\n".join(_inputs(s)), cotangent=_cotangent(s, exp), wrt=wrt, expression=expression,
        rule=info_rule(s), how=fragment.how if fragment else "",
        want=", ".join(f'"{k}": {literal(v)}' for k, v in want.items()))
    compare = COMPARE.format(
        close=CLOSE.format(rtol=rtol, atol=atol), agree=AGREE, exact_note=exact_zero.REPRO_NOTE if exact else "",
        exact_test=exact_zero.REPRO_TEST if exact else "", codes=f"({present} if bad else {absent_code})",
        absent=json.dumps(absent),   # a Python string literal too (escapes, ASCII only)
        have=HAVE_COMPLEX if cplx else HAVE_REAL)
    return head + call + prelude + MEASURE[transform].format(fallback=fallback, **fields) + compare


ORACLE_TRANSFORMS = tuple(FRAGMENTS)
# The kinds of check that record the seed of u (one seed for them all: forward mode and
# second order share their direction).
DIRECTED = tuple(k for o in oracles.BUILT_IN if o.repro is not None and o.repro.directed for k in o.kinds)
# A fuzz finding's script where MLX agrees with the rule: what the fuzzer saw, and why one
# clean run is not a fix (a defect that reads memory it does not own can depend on what ran
# before it in the process: the fuzzer's worker had run other calls first).
NOT_SHOWN = ("absent in this run (the fuzzer saw {seen}; a defect that reads memory it does not own can "
             "depend on what ran before it in the process, so this run alone does not show it fixed)")


def finding_options(oracle: str, kind: str, record: dict) -> dict:
    """render()'s options for a fuzz finding named after `oracle`, from its record:
    the same transform as the oracle, along the direction its checks recorded (else
    the default: a status check raised before it recorded one), and an absent verdict
    that says what the fuzzer saw. One function, for the fuzzer that writes the
    script and the validator that writes it again."""
    opts = {"exact": oracle == "exact_zero", "isolate": kind.startswith("crash"),
            "absent": NOT_SHOWN.format(seen=_one_line(_seen(oracle, record)))}
    if oracle in FRAGMENTS:
        opts["transform"] = oracle
        seeds = [c["seed"] for c in record.get("checks") or [] if c.get("kind") in DIRECTED and "seed" in c]
        if seeds:
            opts["direction_seed"] = int(seeds[0])
    return opts


def _seen(oracle: str, record: dict) -> str:
    """The finding's failure as its record holds it, in a few words: the failed check of
    its oracle (else the first failed one) and why, or the VJP's exception."""
    failed = [c for c in record.get("checks") or [] if not c.get("passed", True)]
    mine = [c for c in failed if c.get("kind") == oracle] or failed
    if oracle == "vjp_exception" or not mine:
        return f"the VJP raise {record.get('error')}"[:160]
    c = mine[0]
    return f"{c.get('name')} fail: {c.get('error') or c.get('reason')}"[:160]


def info_rule(s) -> str:
    return s.info.rule or "(see the op's float64 reference)"


def _expected(s, expected) -> dict:
    if expected is not None and (any(t.dtype == "complex64" for t in s.operands.values())
                                 or any(np.size(v) == 0 or np.shape(v)[-1:] == (2,) for v in expected.values())):
        # A file's complex values are [re, im] pairs (a real input may give a complex output:
        # any trailing axis of 2 may be one), and an empty array loses its trailing axes in
        # JSON: recompute them (the same float64 numbers).
        expected = None
    return {k: _values(v) for k, v in (expected if expected is not None else expected_mod.expected(s)).items()}


def _wanted(s, exp: dict, transform: str, seed: int) -> tuple:
    """({check name: float64 values}, the direction u or None) for what the script measures."""
    if transform in FRAGMENTS:
        return FRAGMENTS[transform].wanted(s, exp, seed)
    if transform == "forward":
        return {"forward": exp["forward"]}, None
    return {"forward": exp["forward"], **{f"grad:{n}": exp["grad:" + n] for n in s.wrt}}, None


def _direction(s, u) -> str:
    dtype = "complex64" if np.iscomplexobj(u) else s.dtype
    return f"mx.array({literal(u)}, dtype=mx.{dtype})"


def _values(v) -> np.ndarray:
    arr = np.asarray(v)
    return arr.astype(np.complex128) if np.iscomplexobj(arr) else arr.astype(np.float64)


def _inputs(s) -> list:
    out = []
    for name, t in s.operands.items():
        out += _operand(_var(name), t, name in s.info.integer_operands)
    return out


def _cotangent(s, exp) -> str:
    cot = expected_mod.cotangent(s, exp["forward"])
    dtype = "complex64" if np.iscomplexobj(cot) else s.dtype   # a real input may give a complex output
    if np.all(cot == 1):
        return f"mx.ones({tuple(int(d) for d in cot.shape)}, dtype=mx.{dtype})"
    return f"mx.array({literal(cot)}, dtype=mx.{dtype})"


def _call(s) -> tuple:
    """(source placed before the inputs, the expression f returns): the op's literal
    call for these params where it has one, else its call file and a call of it."""
    expression = s.info.call_expression and s.info.call_expression(s.params, {n: _var(n) for n in s.operands})
    if expression is not None:   # None: the op cannot write these params' call as one expression
        return "", expression
    operands = ", ".join(f"{n!r}: {_var(n)}" for n in s.operands)
    return "\n" + call_source(s.info), f"mlx_call({{{operands}}}, {s.params!r})"


def _one_line(text: str) -> str:
    """Text from a finding, safe inside a docstring."""
    clean = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return clean.replace("\\", "/").replace('"""', "'''")[:300]

"""The gate's verdict rules, one policy for the gate that runs (native/gate.py) and the
validator that re-derives its verdict offline (validation/native.py): which ops a patch
is held to, which defect classes it fixed, which scenarios it must then pass, what
counts as a regression. Pure functions of comparison rows (scenario, op, pristine and
patched status, expects_defect, in_scope, source), the oracles each non-passing record
fails, and the first-order defect tags of the expected defects; numpy only.
"""
from __future__ import annotations

from . import oracles

TARGET = ("gather_mm", "gather_qmm")   # the ops this project's first patch is about
# The oracles a patch is held to for the ops in its scope: the first-order ones, which
# check the gradient rules themselves. Findings of the others (second order, vmap,
# compile, forward mode) on both builds are defects of other rules: listed, not blamed.
# For regressions every oracle counts.
HELD = ("vjp_exception", "reference", "refusal", "fd_elementwise", "exact_zero", "error", "crashed", "missing")



def failing(rec: dict | None) -> list:
    """The oracles whose checks a record fails (error: it has an error, crashed: its
    process died, missing: the build did not run it)."""
    if rec is None:
        return ["missing"]
    out = set()
    if rec.get("status") == "crashed":
        out.add("crashed")
    elif rec.get("error"):
        out.add("error")
    for c in rec.get("checks") or []:
        if not c.get("passed"):
            row = oracles.of_kind(c.get("kind", "reference"))
            out.add(row.name if row else str(c.get("kind")))
    if rec.get("status") not in (None, "pass") and not out:
        out.add("error")
    return sorted(out)


def changed_ops(*comps, reruns: dict | None = None) -> list:
    """Ops with a scenario whose status differs between the builds (a change its reruns
    show flaky does not count). `reruns`: {comparison index: scenario reruns}."""
    return sorted({r.get("op") for i, c in enumerate(comps) if c for r in c["rows"]
                   if r["pristine"] != r["patched"] and r.get("op")
                   and confirmed_scenario((reruns or {}).get(i), r["scenario"])})


def resolve_scope(fixes, comps, mlx_rows=(), reruns: dict | None = None, claims=None) -> dict:
    """The ops the patch is held to fix. `fixes`: None (auto: the ops whose scenarios
    change, and all of TARGET when one of them does, and every op a series' manifest
    claims a fix for), "none", or a list of ops. `claims`: [(op, class)] of the manifest.
    Returns {"ops", "how", "strict": ops whose every expected defect must reproduce,
    "claims"}."""
    if fixes == "none":
        return {"ops": [], "how": "none (--fixes none)", "strict": [], "claims": []}
    claims = sorted({tuple(c) for c in claims or ()})
    if fixes:
        return {"ops": sorted(fixes), "how": "--fixes", "strict": sorted(fixes), "claims": claims}
    ops = set(changed_ops(*comps, reruns=reruns))
    if ops & set(TARGET):
        ops |= set(TARGET)
    claimed = {op for op, _ in claims} - ops
    ops |= {op for op, _ in claims}
    return {"ops": sorted(ops), "how": "auto: the ops whose scenarios change"
            + (f" (all of {', '.join(TARGET)} when one does)" if ops & set(TARGET) else "")
            + (f", and those the series' manifest claims ({', '.join(sorted(claimed))})" if claimed else ""),
            "strict": sorted(ops & set(TARGET)), "claims": claims}


RERUNS = 2


def confirmed_scenario(reruns: dict | None, name: str) -> bool:
    """A regression stands unless its reruns show it flaky (no reruns recorded: it stands)."""
    seen = (reruns or {}).get(name)
    return seen is None or bool(seen.get("confirmed"))


def _held(fails: dict | None, r: dict, variant: str) -> set:
    """The gradient rules' own oracles a row's record fails on one build."""
    if r[variant] == "pass":
        return set()
    return set((fails or {}).get(r["scenario"], {}).get(variant) or ["error"]) & set(HELD)


def worse(fails: dict | None, r: dict) -> bool:
    """Failing on both builds, but patched fails one of the gradient rules' own oracles
    that pristine's record (with every check evaluated: a fail, not an error or a crash)
    passes: a new defect on top of an old one (a crash where pristine only failed a
    second-order check, say)."""
    return r["pristine"] == "fail" and r["patched"] != "pass" and \
        bool(_held(fails, r, "patched") - _held(fails, r, "pristine"))


def regression(fails: dict | None, r: dict) -> bool:
    return (r["pristine"] == "pass" and r["patched"] != "pass") or worse(fails, r)


def judge(comp: dict, scope: dict, fails: dict | None = None, reruns: dict | None = None,
          tags: dict | None = None) -> dict:
    """What the rows say under the scope: lists of scenario names per finding.

    `fails` (failing_oracles): which oracles each non-passing record fails; without it
    every failure counts as one of the gradient rules' own. `tags` ({scenario: defect
    tags} of the expected defects): the patch is held to fixing a defect class (a tag)
    once it fixes one of its scenarios, or every expected defect of the ops named by
    --fixes, and every in-scope regression-corpus entry of the ops in scope; without
    `tags` every expected defect of the ops in scope. Expected defects of other classes
    that fail on both builds are pre-existing."""
    ops, strict = set(scope["ops"]), set(scope["strict"])
    explicit = scope.get("how") == "--fixes"
    rows = comp["rows"]
    stable = lambda r: confirmed_scenario(reruns, r["scenario"])  # noqa: E731
    fixed = [r for r in rows if r["pristine"] != "pass" and r["patched"] == "pass" and stable(r)]
    # a class is the op's own (array_then_slice of at_set is not at_max's): (op, tag); a
    # scenario fixes its classes once patched passes the gradient rules' own oracles
    # where pristine failed one (a second-order failure left on it is another rule's)
    first_fixed = [r for r in rows if stable(r) and _held(fails, r, "pristine") and not _held(fails, r, "patched")
                   and (r["patched"] == "pass" or fails is not None)]
    classes = {(r.get("op"), t) for r in fixed + first_fixed for t in (tags or {}).get(r["scenario"], ())}
    classes |= {tuple(c) for c in scope.get("claims") or ()}

    def claimed(r) -> bool:
        if r.get("op") not in ops or not r.get("in_scope", True):
            return False
        if r.get("source") == "regression":
            return True
        if not r["expects_defect"]:
            return False
        # held once the patch fixes every class that bites on it: a scenario of a fixed
        # class that also carries a class the patch leaves alone is pre-existing
        mine = {(r.get("op"), t) for t in tags.get(r["scenario"], ())} if tags is not None else set()
        return explicit or tags is None or bool(mine) and mine <= classes
    scoped = [r for r in rows if claimed(r)]
    expected = [r for r in rows if r.get("op") in ops and r.get("in_scope", True) and r["expects_defect"]]
    return {
        "rows": len(rows),
        "classes": sorted({t for _, t in classes}),
        "scoped": [r["scenario"] for r in scoped],
        "expected": [r["scenario"] for r in expected],
        # an expected defect of a strict op that the pristine build does not show
        "missed": [r["scenario"] for r in expected if r["pristine"] == "pass" and r.get("op") in strict],
        "absent": [r["scenario"] for r in expected if r["pristine"] == "pass" and r.get("op") not in strict],
        "unfixed": [r["scenario"] for r in scoped if r["patched"] != "pass" and _held(fails, r, "patched")
                    and stable(r)],
        "other_rules": [r["scenario"] for r in scoped if r["patched"] != "pass" and not _held(fails, r, "patched")],
        "regressed": [r["scenario"] for r in rows if regression(fails, r) and stable(r)],
        "flaky": [r["scenario"] for r in rows if ((r["pristine"] == "pass") != (r["patched"] == "pass")
                                                  or worse(fails, r)) and not stable(r)],
        "fixed": [r["scenario"] for r in fixed],
        "pre_existing": [r["scenario"] for r in rows if r["pristine"] != "pass" and r["patched"] != "pass"
                         and r not in scoped and not worse(fails, r)],
        "passing_pristine": sum(r["pristine"] == "pass" for r in rows),
        "corpus": sum(r.get("source") == "regression" for r in scoped),
    }

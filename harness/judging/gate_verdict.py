"""The gate's verdict, one module for the gate that runs (harness/gate/) and the
validator that re-derives its verdict offline (validation/native.py): which ops a
patch is held to, which defect classes it fixed, which scenarios it must then pass,
what counts as a regression; and the same for MLX's own tests (the outcomes that
count as working, a pass -> fail its reruns show flaky, what the patch's own
regression tests must show). Pure functions of comparison rows (scenario, op,
pristine and patched status, expects_defect, in_scope, source), the oracles each
non-passing record fails, the first-order defect tags of the expected defects and
the MLX tests' recorded outcomes; numpy only.
"""
from __future__ import annotations

# Which oracles a record fails, and those a patch is held to for the ops in its scope (the
# first-order ones and the outcomes error, crashed, missing): one implementation each, in
# harness/oracles/, read here by the gate and the validator.
from ..oracles import HELD, failing  # noqa: F401
from ..ops import first_patch

TARGET = first_patch()   # the ops this project's first patch is about (OpInfo.first_patch)


def changed_ops(*comps, reruns: dict | None = None) -> list:
    """Ops with a scenario whose status differs between the builds (a change its reruns
    show flaky does not count). `reruns`: {comparison index: scenario reruns}."""
    return sorted({r.get("op") for i, c in enumerate(comps) if c for r in c["rows"]
                   if r["pristine"] != r["patched"] and r.get("op")
                   and confirmed_scenario((reruns or {}).get(i), r["scenario"])})


def resolve_scope(fixes, comps, mlx_rows=(), reruns: dict | None = None, claims=None, inferred=None) -> dict:
    """The ops the patch is held to fix. `fixes`: None (auto: the ops whose scenarios
    change, and all of TARGET when one of them does, and every op a series' manifest
    claims a fix for, or the diff's touched functions are inferred to claim), "none", or a
    list of ops. `claims`: [(op, class)] of the manifest; `inferred`: [(op, class)] read
    from the diff itself (inferred_claims). Returns {"ops", "how", "strict": ops whose
    every expected defect must reproduce, "claims", "inferred": the inferred claims no
    manifest made}."""
    if fixes == "none":
        return {"ops": [], "how": "none (--fixes none)", "strict": [], "claims": [], "inferred": []}
    claims = sorted({tuple(c) for c in claims or ()})
    inferred = sorted({tuple(c) for c in inferred or ()} - set(claims))
    if fixes:
        return {"ops": sorted(fixes), "how": "--fixes", "strict": sorted(fixes), "claims": claims,
                "inferred": inferred}
    ops = set(changed_ops(*comps, reruns=reruns))
    if ops & set(TARGET):
        ops |= set(TARGET)
    claimed = {op for op, _ in claims} - ops
    guessed = {op for op, _ in inferred} - ops - claimed
    ops |= {op for op, _ in claims + inferred}
    return {"ops": sorted(ops), "how": "auto: the ops whose scenarios change"
            + (f" (all of {', '.join(TARGET)} when one does)" if ops & set(TARGET) else "")
            + (f", and those the series' manifest claims ({', '.join(sorted(claimed))})" if claimed else "")
            + (f", and those inferred from the functions the diff changes ({', '.join(sorted(guessed))})"
               if guessed else ""),
            "strict": sorted(ops & set(TARGET)), "claims": claims, "inferred": inferred}


def inferred_claims(ops, comps, partly: dict | None, tags: dict | None) -> list:
    """[(op, class)] a diff claims without saying so: for each op its touched functions
    reach (`ops`, touched.inferred_ops), each first-order defect class (`tags`
    {scenario: tags}) of an expected defect of that op that the patch fixes (fail ->
    pass) or fixes in part (`partly` {scenario: [checks]}, partly_fixed: a check that
    fails pristine passes patched while another still fails): the diff acts on that rule,
    so it is held to fixing it in every scenario of the class. A class none of whose checks
    it mends stays pre-existing, even where its values move (a diff that fixes one class
    of an op may shift another's wrong values, or turn a crash into an error)."""
    ops, partly, tags = set(ops or ()), partly or {}, tags or {}
    return sorted({(r["op"], t) for c in comps if c for r in c["rows"]
                   if r.get("op") in ops and r["expects_defect"] and r.get("in_scope", True)
                   and (r["scenario"] in partly or (r["pristine"] != "pass" and r["patched"] == "pass"))
                   for t in tags.get(r["scenario"], ())})


def _failing_on_both(records: dict):
    """(scenario, pristine record, patched record) for each scenario neither build passes
    (records {variant: [records]})."""
    by = {v: {r["scenario"]: r for r in recs} for v, recs in records.items()}
    for name, p in (by.get("pristine") or {}).items():
        q = (by.get("patched") or {}).get(name)
        if q is not None and "pass" not in (p.get("status"), q.get("status")):
            yield name, p, q


def partly_fixed(records: dict) -> dict:
    """{scenario: [checks]} for each scenario failing on both builds (records {variant:
    [records]}) with checks, run on both, that fail pristine and pass patched."""
    out = {}
    for name, p, q in _failing_on_both(records):
        cq = {c.get("name"): c for c in q.get("checks") or ()}
        mended = [c.get("name") for c in p.get("checks") or ()
                  if c.get("passed") is False and (cq.get(c.get("name")) or {}).get("passed") is True]
        if mended:
            out[name] = mended
    return out


def _observed_differs(a: dict, b: dict) -> bool:
    """Two records of one check: their observed values differ beyond the check's own
    tolerance (a last-bit difference of a recompiled unit is no change), or one has none."""
    import numpy as np

    from ..core.checks import shaped
    x, y = a.get("observed"), b.get("observed")
    if x is None or y is None:
        return (x is None) != (y is None)
    try:
        x, y = shaped(x, a.get("observed_shape")), shaped(y, b.get("observed_shape"))
        if x.shape != y.shape:
            return True
        return not np.allclose(x, y, rtol=float(a.get("rtol") or 0), atol=float(a.get("atol") or 0),
                               equal_nan=True)
    except (TypeError, ValueError):
        return x != y


def value_changes(records: dict) -> dict:
    """{scenario: [what differs]} for each scenario that fails on both builds (records
    {variant: [records]}) with a different outcome ("status"), a check one build ran and
    the other did not, or a check whose observed values differ (its name)."""
    out = {}
    for name, p, q in _failing_on_both(records):
        diff = ["status"] if p.get("status") != q.get("status") else []
        cp = {c.get("name"): c for c in p.get("checks") or ()}
        cq = {c.get("name"): c for c in q.get("checks") or ()}
        diff += sorted(k for k in set(cp) ^ set(cq) if k)
        diff += [k for k in cp if k in cq and _observed_differs(cp[k], cq[k])]
        if diff:
            out[name] = diff
    return out


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
          tags: dict | None = None, changed: dict | None = None) -> dict:
    """What the rows say under the scope: lists of scenario names per finding.

    `fails` (failing_oracles): which oracles each non-passing record fails; without it
    every failure counts as one of the gradient rules' own. `tags` ({scenario: defect
    tags} of the expected defects): the patch is held to fixing a defect class (a tag)
    once it fixes one of its scenarios, or every expected defect of the ops named by
    --fixes, and every in-scope regression-corpus entry of the ops in scope; without
    `tags` every expected defect of the ops in scope. Expected defects of other classes
    that fail on both builds are pre-existing. `changed` (value_changes): a held scenario
    not passing patched whose values the patch changed is also "changed, not fixed"."""
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
    classes |= {tuple(c) for c in scope.get("claims") or ()} | {tuple(c) for c in scope.get("inferred") or ()}

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
        "changed_not_fixed": [r["scenario"] for r in scoped if r["patched"] != "pass" and _held(fails, r, "patched")
                              and stable(r) and r["scenario"] in (changed or {})],
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


# --- what the rules read, derived the same way on both sides ---------------------------------------

def failing_by_scenario(records: dict) -> dict:
    """{scenario: {variant: [oracles its record fails]}} for every record that does not
    pass, from {variant: [records]}: what the verdict holds a patch to (HELD) is read from
    it. The gate keeps it in gate.json; the validator re-derives it from the results files."""
    out = {}
    for v, recs in records.items():
        for r in recs:
            if r.get("status") != "pass":
                out.setdefault(r["scenario"], {})[v] = failing(r)
    return out


def expects_defect(kind: str, expected: bool, scenario, oracles=None) -> bool:
    """Whether a pristine build is expected not to pass a scenario where only `oracles`
    run (None: every one). `kind`: "catalog", "regression" (a corpus entry), "finding"
    or "file"; `expected`: what its record or file says. A class only a transform
    oracle shows (OpInfo.revealed_by) is not expected of a first-order executor."""
    if oracles is None or kind == "finding":
        return expected
    if kind == "catalog":
        return scenario.expects_defect_under(oracles)
    return expected and scenario.expects_defect_under(oracles)


def biting(scenario, oracles=None) -> list:
    """The defect tags that bite on a scenario's call (conditional tags resolved, and with
    `oracles` only those they show); an unbound scenario (an op this package does not
    know): its tags as given."""
    if scenario.info is None:
        return list(scenario.defect_tags)
    return [t for t in scenario.defect_tags if scenario.info.expects_defect((t,), scenario.params, oracles)]


# --- the sweep's registered reproducers (probes/sweep/<id>.py: exit 1 present, 0 absent) -----------

def sweep_change(pristine, patched) -> str:
    """One reproducer's exit codes on the two builds, as a change: "fixed" (1 -> 0),
    "regression" (0 -> anything else: a class the pristine build does not show appears),
    "pre-existing" (1 -> 1), "" (0 -> 0), "not judged" (either could not test: 125, a
    crash of the script itself, a hang it was killed for)."""
    if pristine == 0:
        return "" if patched == 0 else "regression"
    if pristine == 1 and patched in (0, 1):
        return "fixed" if patched == 0 else "pre-existing"
    return "not judged"


def sweep_verdict(doc: dict | None) -> tuple:
    """(ok, one line) over gate.json's "sweep_reproducers": a regression fails the gate."""
    rows = (doc or {}).get("rows") or []
    by = {}
    for r in rows:
        by.setdefault(r["change"], []).append(r["reproducer"])
    n = lambda k: len(by.get(k, ()))  # noqa: E731
    line = (f"sweep reproducers (probes/sweep): {len(rows)} registered; {n('fixed')} fixed (exit 1 -> 0), "
            f"{n('regression')} regressions (exit 0 -> not 0), {n('pre-existing')} present on both, "
            f"{n('')} absent on both" + (f", {n('not judged')} not judged ({', '.join(by['not judged'])})"
                                        if n("not judged") else ""))
    if by.get("regression"):
        return False, line + " -- regressed: " + ", ".join(by["regression"])
    return True, line


# --- MLX's own tests -------------------------------------------------------------------------------

GOOD = ("pass", "xfail")          # what a test that works gives
NOT_RUN = ("skip", None)
MLX_RERUNS = 3                    # each pass -> fail is run again this many times a side


def mlx_change(a, b) -> str:
    """One test's outcomes on the two builds, as a change: "regression" (passes pristine,
    not patched), "fixed" (the reverse), "pre-existing" (fails on both the same way),
    "changed" (failing differently, or pass <-> skip / xfail), "missing" (ran on one build
    only), "" (the same)."""
    good_a, good_b = a in GOOD or a == "skip", b in GOOD or b == "skip"
    if a is None or b is None:
        return "missing"
    if a == b:
        return "pre-existing" if not good_a else ""
    if a in GOOD and not good_b:
        return "regression"
    if not good_a and b in GOOD:
        return "fixed"
    return "changed"


def mlx_key(row: dict) -> str:
    return f"{row['suite']}:{row['test']}"


def mlx_confirmed(seen: dict) -> bool:
    """A pass -> fail its reruns confirm: every rerun passes on pristine, none on patched."""
    return all(o in GOOD for o in seen["pristine"]) and all(o not in GOOD for o in seen["patched"])


def mlx_flaky(row: dict, reruns: dict | None) -> bool:
    """A regression its reruns did not confirm."""
    seen = (reruns or {}).get(mlx_key(row))
    return row["change"] == "regression" and seen is not None and not mlx_confirmed(seen)


def mlx_regressions(rows: list, reruns: dict | None) -> list:
    """The rows that fail the MLX tests' verdict: a pass -> fail (unless its reruns show
    it flaky), or a test that passed on pristine and did not run on patched."""
    return [r for r in rows if (r["change"] == "regression" and not mlx_flaky(r, reruns))
            or (r["change"] == "missing" and r["pristine"] in GOOD)]


def handoff_problems(rows: list) -> list:
    """The patch's regression tests (suite "handoff") that do not do their job, one line
    each: a file none of whose tests fails on pristine does not show the defect, and a
    file with a test that does not pass patched is not fixed. (A file may hold a test
    that passes on pristine beside those that carry the class.)"""
    files = {}
    for r in rows:
        if r["suite"] == "handoff":
            files.setdefault(r["test"].split(".")[0], []).append(r)
    out = []
    for name, rs in sorted(files.items()):
        if not any(r["pristine"] not in GOOD and r["pristine"] not in NOT_RUN for r in rs):
            out.append(f"regression test {name}: no test fails on pristine (it does not show the defect)")
        bad = [r["test"] for r in rs if r["patched"] not in GOOD]
        if bad:
            out.append(f"regression test {name}: {len(bad)} of {len(rs)} do not pass patched (first: {bad[0]})")
    return out


def recorded_reruns(gate_doc) -> dict:
    """The MLX tests the gate ran again after a pass -> fail (gate.json mlx_test_reruns:
    {suite:test: {"pristine": [outcomes], "patched": [outcomes]}}), each with exactly
    MLX_RERUNS outcomes a side; anything else recorded there is left out (and its
    regression then stands). Their "confirmed" flag is not read: the rule re-derives it."""
    got = gate_doc.get("mlx_test_reruns") if isinstance(gate_doc, dict) else None
    out = {}
    for k, seen in (got.items() if isinstance(got, dict) else ()):
        sides = [seen.get(v) if isinstance(seen, dict) else None for v in ("pristine", "patched")]
        if all(isinstance(x, list) and len(x) == MLX_RERUNS and all(isinstance(o, str) for o in x) for x in sides):
            out[k] = {"pristine": sides[0], "patched": sides[1]}
    return out

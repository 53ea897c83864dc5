"""The two builds compared: one row per scenario either build ran (comparison), the
oracles each non-passing record fails, the defect classes that bite on each expected
defect, and the gate's lines and exit code over them. The rules that decide are
judging/gate_verdict.py's, which the validator applies to the same rows offline.
"""
from __future__ import annotations

from ..judging.gate_verdict import (biting, changed_ops, expects_defect, failing_by_scenario, inferred_claims, judge,
                                     partly_fixed, resolve_scope, sweep_verdict, value_changes)
from . import mlxtests
from .inputs import VARIANTS


def _entries(items) -> list:
    """Scenarios or cases.files.Entry records (a bare scenario is a catalog entry)."""
    from ..cases import files
    return [e if isinstance(e, files.Entry) else files.Entry(e, "catalog", "catalog", e.expects_defect)
            for e in items]


def failing_oracles(runs: dict) -> dict:
    """{scenario: {variant: [oracles its record fails]}} of both builds' runs (kept in
    gate.json; anyone can re-derive it from the two results files)."""
    return failing_by_scenario({v: runs[v].records for v in VARIANTS})


def changed_values(runs: dict) -> dict:
    """{scenario: [what differs]} of the scenarios failing on both builds whose outcome or
    recorded values the patch changes (kept in gate.json; re-derivable from the two results
    files)."""
    return value_changes({v: runs[v].records for v in VARIANTS})


def mended_checks(runs: dict) -> dict:
    """{scenario: [checks failing pristine, passing patched]} of the scenarios failing on
    both builds (gate.json's "partly_fixed"; re-derivable from the two results files)."""
    return partly_fixed({v: runs[v].records for v in VARIANTS})


def _expected(e, oracles) -> bool:
    """Whether a pristine build is expected not to pass entry `e` where only `oracles` run."""
    return expects_defect(e.kind, e.expects_defect, e.scenario, oracles)


def comparison(entries, runs: dict, units: list, oracles=None) -> dict:
    """One row per scenario either build ran: its op, both statuses, whether a pristine
    build is expected not to pass it, where it came from, and whether the regression
    corpus counts it in the patch's scope (rows out of it carry the reason). `oracles`:
    what the builds' executor checks (the C++ suite: oracles.FIRST_ORDER); a
    catalog scenario's defect class that only another oracle shows is not expected of it."""
    by = {v: {r["scenario"]: r for r in runs[v].records} for v in VARIANTS}
    rows = [_row(e, by, oracles) for e in _entries(entries)
            if e.scenario.name in by["pristine"] or e.scenario.name in by["patched"]]
    skipped = {k["scenario"]: k["reason"] for v in VARIANTS for k in runs[v].skipped}
    return {"units": units, "rows": rows,
            "skipped": [{"scenario": k, "reason": r} for k, r in skipped.items()]}


def _row(e, by: dict, oracles) -> dict:
    s = e.scenario
    rec = by["pristine"].get(s.name) or by["patched"][s.name]
    row = {"scenario": s.name, "op": s.op, "device": rec["device"],
           "pristine": (by["pristine"].get(s.name) or {}).get("status"),
           "patched": (by["patched"].get(s.name) or {}).get("status"),
           "expects_defect": _expected(e, oracles), "source": e.kind, "in_scope": e.in_scope}
    if e.kind == "regression":
        row["signature"] = e.meta.get("signature")
        row["recorded_pristine"] = e.meta["pristine"]["status"]
    if not e.in_scope:
        row["reason"] = e.reason
    return row


def biting_tags(entries, oracles=None) -> dict:
    """{scenario: the defect tags that bite on its call} for the expected defects (catalog
    scenarios: conditional tags resolved, and with `oracles` only the tags those oracles
    show, OpInfo.expects_defect; files and corpus entries: their tags as given)."""
    out = {}
    for e in entries:
        if e.expects_defect and e.scenario.defect_tags:
            tags = biting(e.scenario, oracles)
            if tags:
                out[e.scenario.name] = tags
    return out


# --- the gate's lines -----------------------------------------------------------------------------

def lost_fast_path(comp: dict) -> list:
    """The ops whose right-sorted VJP took the segmented fast path pristine and not patched."""
    fp = comp.get("fast_path") or {}
    return sorted(op for op, on in (fp.get("pristine") or {}).items()
                  if on and (fp.get("patched") or {}).get(op) is False)


def verdict(comp: dict, scope: dict | None = None, what: str = "harness", fails: dict | None = None,
            reruns: dict | None = None, tags: dict | None = None, changed: dict | None = None) -> tuple:
    """(exit code, one line) for one comparison under the scope (default: auto from this
    comparison alone). `changed`: value_changes of this comparison's records."""
    return judged_verdict(comp, scope, what, fails, reruns, tags, changed)[:2]


def judged_verdict(comp: dict, scope: dict | None = None, what: str = "harness", fails: dict | None = None,
                   reruns: dict | None = None, tags: dict | None = None, changed: dict | None = None) -> tuple:
    """verdict's (exit code, line), and the judge's full lists (gate.json's verdict)."""
    scope = scope or resolve_scope(None, [comp])
    j = judge(comp, scope, fails, reruns, tags, changed)
    code, line = _verdict_line(comp, scope, what, j)
    return code, line, j


def _verdict_line(comp: dict, scope: dict, what: str, j: dict) -> tuple:
    if not j["rows"]:
        return 1, f"{what}: no scenario ran"
    lost = lost_fast_path(comp)
    if lost:
        return 1, (f"{what}: the patched units no longer take the right-sorted segmented fast path "
                   f"({', '.join(lost)}): MoE backward passes would lose it")
    line = f"{what}: " + _summary(j, scope)
    some = _first_of_each_op({r["scenario"]: r.get("op") for r in comp["rows"]})
    cnf = set(j["changed_not_fixed"])
    bad = [f"{why}: {some(names)}" for why, names in (("not reproduced on pristine", j["missed"]),
                                                      ("changed, not fixed", j["changed_not_fixed"]),
                                                      ("not passing patched", [n for n in j["unfixed"]
                                                                               if n not in cnf]),
                                                      ("regressed", j["regressed"])) if names]
    if bad:
        return 1, line + " -- " + "; ".join(bad)
    return 0, line


def _summary(j: dict, scope: dict) -> str:
    """What the judge found, counted: reproduced, held and passing, regressions, the rest."""
    n_exp, missed, unfixed, reg = len(j["expected"]), j["missed"], j["unfixed"], j["regressed"]
    scope_txt = ", ".join(scope["ops"]) if len(scope["ops"]) <= SHOWN else f"the {len(scope['ops'])} ops in scope"
    scope_txt = scope_txt or "no op"
    return (f"pristine reproduced {n_exp - len(missed) - len(j['absent'])}/{n_exp} expected defects "
            f"of {scope_txt}; patched passes {len(j['scoped']) - len(unfixed)}/{len(j['scoped'])} of the "
            f"scenarios the patch is held to"
            + (f" ({len(j['classes'])} defect classes, and the corpus: listed in gate.json's verdict)"
               if j["classes"] else "")
            + " in the gradient rules' own oracles"
            + (f" ({j['corpus']} from the regression corpus)" if j["corpus"] else "")
            + f"; {len(reg)} regressions (of the {j['passing_pristine']} scenarios pristine passes, or newly "
            f"failing a gradient-rule check)"
            + f"; {len(j['pre_existing'])} fail on both (pre-existing)"
            + (f"; {len(j['other_rules'])} of the scope's fail on both only in oracles of other rules "
               f"(second order, vmap, ...)" if j["other_rules"] else "")
            + (f"; {len(j['fixed'])} fixed" if j["fixed"] else "")
            + (f"; {len(j['flaky'])} flaky (the change did not come back on its reruns)" if j["flaky"] else ""))


def _first_of_each_op(op_of: dict):
    def some(names) -> str:
        """The first scenario of each op, each with how many more of that op."""
        by = {}
        for n in names:
            by.setdefault(op_of.get(n), []).append(n)
        return ", ".join(ns[0] + (f" (+{len(ns) - 1})" if len(ns) > 1 else "") for ns in by.values())
    return some


SHOWN = 6   # ops or claims a verdict line names; more are counted (the lists: gate.json's verdict)


def _short(how: str) -> str:
    """The scope's reason with each long parenthesised list of ops counted (the scope line
    names every op once already)."""
    import re
    return re.sub(r"\(([a-z0-9_, ]+)\)", lambda m: f"({m.group(1).count(',') + 1} ops)"
                  if m.group(1).count(",") >= SHOWN else m.group(0), how)


def claims_line(scope: dict, guessed: dict) -> str:
    """Which defect classes the patch is held to because a manifest says so, and which the
    gate inferred from the functions the diff changes (with those functions, per op); long
    lists counted per op, in full in gate.json's verdict.scope."""
    def per_op(claims):
        by = {}
        for op, cls in claims:
            by.setdefault(op, []).append(cls)
        if len(claims) > SHOWN:
            return f"{len(by)} ops: " + ", ".join(f"{op} {len(c)}" for op, c in sorted(by.items()))
        return "; ".join(f"{op}: {', '.join(c)}" for op, c in sorted(by.items()))
    manifest, inferred = scope.get("claims") or [], scope.get("inferred") or []
    where = {op: guessed[op] for op, _ in inferred if op in guessed}
    if len(where) > SHOWN:
        where = {f"{len(where)} ops": ["see gate.json's inferred"]}
    return (f"claims: {len(manifest)} from the series' manifest" + (f" ({per_op(manifest)})" if manifest else "")
            + f"; {len(inferred)} inferred from the functions the diff changes"
            + (f" ({per_op(inferred)}; via {'; '.join(f'{op}: ' + ', '.join(fs) for op, fs in sorted(where.items()))})"
               if inferred else "")
            + (f"; the diff reaches {len(guessed)} ops' primitives, no defect class of the others changed"
               if guessed and len(where) < len(guessed) else ""))


def overall(outcome: dict, scope_arg=None) -> tuple:
    """(exit code, scope, [lines]) over every stage that ran."""
    v = overall_full(outcome, scope_arg)
    return v["exit"], v["scope"], v["lines"]


def overall_full(outcome: dict, scope_arg=None) -> dict:
    """{"exit", "scope", "lines", "judged": {stage: the judge's lists}} over every stage
    that ran: what gate.json's "verdict" records (the full lists the printed table counts)."""
    info = outcome.get("gate") or {}
    comps = [outcome.get("comparison"), outcome.get("native_comparison")]
    mlx_rows = outcome.get("mlx_tests", {}).get("rows", [])
    fails, reruns = info.get("failing") or {}, info.get("scenario_reruns") or {}
    by_index = {0: reruns.get("harness"), 1: reruns.get("native")}
    # the classes the gradient rules' own oracles (HELD, first order) show: what the
    # verdict holds a patch to, on either executor
    tags = info.get("defect_tags_first_order", info.get("defect_tags"))
    changed, partly = info.get("changed_values") or {}, info.get("partly_fixed") or {}
    guessed = (info.get("inferred") or {}).get("ops") or {}
    inferred = sorted({c for comp, what in zip(comps, ("harness", "native"))
                       for c in inferred_claims(guessed, [comp], partly.get(what), tags)})
    scope = resolve_scope(scope_arg, comps, mlx_rows, by_index, info.get("claims"), inferred)
    codes, lines = [], [f"scope: {', '.join(scope['ops']) or 'none'} ({_short(scope['how'])}); "
                        f"{claims_line(scope, guessed)}"]
    judged = {}
    for comp, what in zip(comps, ("harness", "native")):
        if comp is not None:
            c, line, judged[what] = judged_verdict(comp, scope, what, fails.get(what), reruns.get(what), tags,
                                                   changed.get(what))
            codes.append(c)
            lines.append(line)
    if "mlx_tests" in outcome:
        ok, line = mlxtests.verdict(mlx_rows, info.get("mlx_test_reruns"))
        codes.append(0 if ok else 1)
        lines.append(line)
    if info.get("sweep_reproducers") is not None:
        ok, line = sweep_verdict(info["sweep_reproducers"])
        codes.append(0 if ok else 1)
        lines.append(line)
    acted = bool(changed_ops(*comps, reruns=by_index)) or any(r["change"] for r in mlx_rows) \
        or any(r["change"] in ("fixed", "regression") for r in (info.get("sweep_reproducers") or {}).get("rows", ()))
    if scope_arg != "none" and not acted:   # values changed without an outcome changing fix nothing
        codes.append(1)
        lines.append("the patch changes no scenario's, no MLX test's and no sweep reproducer's outcome (pass "
                     "--fixes none when that is what you expect)")
    return {"exit": max(codes) if codes else 1, "scope": scope, "lines": lines, "judged": judged}


# --- the printed table: one row per op that matters, pristine against patched ----------------------

def op_table(comp: dict, scope: dict, j: dict) -> list:
    """[{op, scenarios, pass pristine, pass patched, fixed, regressed, held, held passing,
    changed not fixed, pre-existing}] for each op in scope or with any change, and one row
    "(other ops)" summing the rest: the counts the verdict line's lists stand for."""
    sets = {k: set(j[k]) for k in ("fixed", "regressed", "scoped", "unfixed", "changed_not_fixed",
                                    "pre_existing", "flaky")}
    ops, per = set(scope["ops"]), {}
    for r in comp["rows"]:
        op = r.get("op") or "?"
        key = op if op in ops or r["pristine"] != r["patched"] or r["scenario"] in sets["regressed"] \
            else "(other ops)"
        per.setdefault(key, []).append(r)
    # an op shown by its own row once any of its rows needs one
    for op in [k for k in per if k != "(other ops)"]:
        per[op] += [r for r in per.get("(other ops)", []) if r.get("op") == op]
        per["(other ops)"] = [r for r in per.get("(other ops)", []) if r.get("op") != op]
    out = []
    for op in sorted(k for k in per if k != "(other ops)") + (["(other ops)"] if per.get("(other ops)") else []):
        rows = per[op]
        n = lambda k: sum(r["scenario"] in sets[k] for r in rows)  # noqa: E731
        out.append({"op": op, "scenarios": len(rows), "pass_pristine": sum(r["pristine"] == "pass" for r in rows),
                    "pass_patched": sum(r["patched"] == "pass" for r in rows), "fixed": n("fixed"),
                    "regressed": n("regressed"), "held": n("scoped"), "held_passing": n("scoped") - n("unfixed"),
                    "changed_not_fixed": n("changed_not_fixed"), "pre_existing": n("pre_existing"),
                    "flaky": n("flaky")})
    return out

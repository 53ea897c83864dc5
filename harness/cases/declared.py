"""The known defects declared on the op records (core/opinfo.KnownDefect) against the
files that describe them: the defect register (cases/defects.json), the catalog's
defect tags, and the regression corpus (harness/regressions/). Each function returns
the disagreements as one line each; tests/cases/test_known_defects.py holds them to
none, so a defect is declared once, on its op, and the files follow it.

The sweep's classes likewise: what a class matches is declared once, by the `Known`
entries of its id (harness/sweep/known.py); `sweep_problems` holds the register's
sweep entries and the reproducers in probes/sweep/ to those declarations
(tests/cases/test_sweep_register.py). The declarations are passed in: this stage
does not import the sweep.
"""
from __future__ import annotations

from ..core.opinfo import FIRST_ORDER_CHECKS


def _declared(records: dict) -> dict:
    """(op, tag) -> KnownDefect, over every record."""
    return {(name, d.tag): d for name, info in records.items() for d in info.known_defects}


def register_problems(defects, records: dict) -> list:
    """Every register entry has exactly one declaration, and every declared register id
    an entry; the entry runs as its declaration says (isolated when fatal, under the
    transform of the oracle that alone shows it)."""
    declared, out = _declared(records), []
    by_id = {}
    for d in (d for d in defects if d.kind == "catalog"):   # sweep classes: sweep_problems
        by_id.setdefault(d.id, []).append(d)
        k = declared.get((d.op, d.klass))
        if k is None:
            out.append(f"register entry {d.id}: no KnownDefect({d.klass!r}) on op {d.op!r}")
        elif d.id not in k.register_ids(d.op):
            out.append(f"register entry {d.id}: KnownDefect({d.klass!r}) of {d.op} lists "
                       f"{list(k.register_ids(d.op))}, not this id")
        else:
            out += _run_problems(d, k)
    for (op, tag), k in declared.items():
        for i in k.register_ids(op):
            if len(by_id.get(i, [])) != 1:
                out.append(f"KnownDefect({tag!r}) of {op}: register id {i} has "
                           f"{len(by_id.get(i, []))} entries in defects.json, not 1")
    return out


def _run_problems(d, k) -> list:
    out = []
    if k.fatal and not d.isolate:
        out.append(f"register entry {d.id}: its KnownDefect is fatal, but the reproducer does not isolate")
    if k.revealed_by != FIRST_ORDER_CHECKS and d.transform != k.revealed_by:
        out.append(f"register entry {d.id}: transform {d.transform!r}, but only {k.revealed_by} shows it")
    if k.revealed_by == FIRST_ORDER_CHECKS and d.transform not in ("", "forward"):
        out.append(f"register entry {d.id}: transform {d.transform!r}, but its KnownDefect says the "
                   "first-order checks show it")
    return out


def catalog_problems(scenarios, records: dict, defects) -> list:
    """Every catalog tag is declared on its op; every declaration tags a catalog scenario
    of its op, unless its register entries say why none can (`outside_catalog`)."""
    declared, out = _declared(records), []
    carried = {(s.op, t) for s in scenarios for t in s.defect_tags}
    for op, tag in sorted(carried - set(declared)):
        out.append(f"catalog: op {op} carries tag {tag!r}, which no KnownDefect of {op} declares")
    outside = {(d.op, d.klass) for d in defects if d.kind == "catalog" and d.outside_catalog.strip()}
    outside |= {key for key, k in declared.items() if k.unregistered}   # the corpus holds them
    for key in sorted(set(declared) - carried - outside):
        out.append(f"KnownDefect({key[1]!r}) of {key[0]}: no catalog scenario carries it "
                   "(and no register entry says why: outside_catalog)")
    return out


def corpus_problems(entries, records: dict) -> list:
    """Every corpus entry's class, and every tag of its scenario, is declared on its op; a
    class declared without a register entry has a corpus entry."""
    declared, out = _declared(records), []
    for e in entries:
        op = e.scenario.op
        for tag in {e.meta.get("class")} | set(e.scenario.defect_tags):
            if (op, tag) not in declared:
                out.append(f"corpus entry {e.meta.get('signature')}: class/tag {tag!r} is not declared "
                           f"on op {op} (KnownDefect)")
    held = {(e.scenario.op, e.meta.get("class")) for e in entries}
    for (op, tag), k in sorted(declared.items()):
        if k.unregistered and (op, tag) not in held:
            out.append(f"KnownDefect({tag!r}) of {op}: unregistered, yet no corpus entry holds it")
    return out


def sweep_problems(defects, known, reproducers) -> list:
    """The register's sweep classes against the sweep's declarations (`known`: Known
    entries, harness/sweep/known.py's KNOWN) and the reproducer files (`reproducers`:
    the stems of probes/sweep/*.py). A declaration of a defect (not a catalog class, not
    a documented limitation of the checker's) has exactly one register entry of its id;
    every sweep entry is declared; every sweep entry has its reproducer, and every
    reproducer is a sweep entry's; a catalog class named by a declaration is a catalog
    entry of the register."""
    entries = [d for d in defects if d.kind == "sweep"]
    catalog = {d.id for d in defects if d.kind == "catalog"}
    declared = {k.id for k in known if not k.catalog and not k.limitation}
    out, ids = [], [d.id for d in entries]
    for i in sorted(declared):
        if ids.count(i) != 1:
            out.append(f"Known({i!r}) of harness/sweep/known.py: {ids.count(i)} sweep entries in "
                       "defects.json, not 1 (`mlx-vjpcheck register declared` writes it)")
    for i in sorted(set(ids) - declared):
        out.append(f"sweep entry {i} of defects.json: no Known({i!r}) in harness/sweep/known.py matches "
                   "it (a catalog class or a limitation is not a sweep entry)")
    files = set(reproducers)
    for i in sorted(set(ids) - files):
        out.append(f"sweep entry {i}: no reproducer probes/sweep/{i}.py")
    for i in sorted(files - set(ids)):
        out.append(f"probes/sweep/{i}.py: no sweep entry of that id in defects.json")
    for k in known:
        if k.catalog and k.id not in catalog:
            out.append(f"Known({k.id!r}, catalog=True): no catalog entry of that id in defects.json")
    return out

"""API coverage: the installed MLX's public functions (sweep/inventory.py) against the
API table (sweep/api.py). Each function is covered (an entry calls it), excluded (a
stated reason: nothing to differentiate), or not covered; the percentage counts the
differentiable ones, that is all but the excluded."""
from __future__ import annotations

from dataclasses import dataclass

from . import api, inventory

TARGET_PERCENT = 95.0


@dataclass(frozen=True)
class Row:
    name: str
    state: str     # "covered" | "excluded" | "not covered"
    detail: str    # the entries' variants, the exclusion's reason, or the signature


def rows(functions=None, entries=None, excluded=None) -> list:
    functions = inventory.public() if functions is None else functions
    entries = api.ENTRIES if entries is None else entries
    excluded = api.EXCLUDED if excluded is None else excluded
    by_name: dict = {}
    for e in entries:
        by_name.setdefault(e.name, []).append(e.variant or "default")
    out = []
    for f in functions:
        if f.name in by_name:
            out.append(Row(f.name, "covered", ", ".join(by_name[f.name])))
        elif f.name in excluded:
            out.append(Row(f.name, "excluded", excluded[f.name]))
        else:
            out.append(Row(f.name, "not covered", f.signature))
    return out


def percent(table: list) -> float:
    differentiable = [r for r in table if r.state != "excluded"]
    if not differentiable:
        return 100.0
    return 100.0 * sum(r.state == "covered" for r in differentiable) / len(differentiable)


def stale(functions=None) -> list:
    """Table names the installed MLX does not have (renamed or removed functions)."""
    have = {f.name for f in (inventory.public() if functions is None else functions)}
    return sorted({e.name for e in api.ENTRIES} - have) + sorted(set(api.EXCLUDED) - have)


def _tally(table: list) -> str:
    n = {s: sum(r.state == s for r in table) for s in ("covered", "excluded", "not covered")}
    return (f"API: {n['covered']} of {n['covered'] + n['not covered']} differentiable public functions "
            f"covered by the sweep ({percent(table):.1f} %, target {TARGET_PERCENT:.0f} %); "
            f"{n['excluded']} excluded with a reason")


def text(table: list) -> str:
    width = max([len(r.name) for r in table] + [8])
    lines = ["", _tally(table), ""]
    lines += [f"{r.name:{width}s} {r.state:11s}  {r.detail}" for r in table if r.state != "covered"]
    return "\n".join(lines) + "\n"


def markdown(table: list, md) -> str:
    lines = ["", "## MLX's public differentiable API (the sweep)", "",
             "Read from the installed MLX by introspection (harness/sweep/inventory.py) and held against "
             "the sweep's API table (harness/sweep/api.py): a function a new MLX adds is listed as not "
             "covered until the table calls it or says why it has no gradient.", "", f"**{_tally(table)}**", "",
             "| function | state | entries, or why excluded |", "|---|---|---|"]
    lines += [f"| {md(r.name)} | {r.state} | {md(r.detail)} |" for r in table]
    return "\n".join(lines) + "\n"

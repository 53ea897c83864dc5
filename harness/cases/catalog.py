"""The scenario catalog: every op's own scenarios, in registry order.

Ops with MLX's sorted_indices flag get each scenario twice, named .../sorted
and .../unsorted; the rest appear once. Values are small integers (or dyadic
fractions) so float32 arithmetic is exact and a mismatch cannot be rounding.
"""
from __future__ import annotations

import dataclasses

from .. import ops
from ..core.scenario import Scenario


def with_flag(s: Scenario, flag: bool) -> Scenario:
    return dataclasses.replace(s, name=f"{s.name}/{'sorted' if flag else 'unsorted'}",
                               sorted_indices=flag)


def variants(s: Scenario) -> list:
    """Sorted and unsorted for ops with the flag; ops without it appear once."""
    if not ops.get(s.op).has_sorted_flag:
        return [s]
    return [with_flag(s, flag) for flag in (True, False)]


def base_scenarios() -> list:
    """Flag-neutral scenarios of every registered op."""
    out = []
    for info in ops.registry().values():
        mine = info.catalog_scenarios()
        wrong = sorted({s.op for s in mine} - {info.name})
        if wrong:
            raise ValueError(f"op {info.name!r} lists scenarios of other ops: {wrong}")
        out += mine
    names = [s.name for s in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(f"duplicate scenario names: {sorted(dupes)}")
    return out


def catalog() -> list:
    return [v for s in base_scenarios() for v in variants(s)]


def digest(scenarios=None) -> str:
    """SHA-256 of the canonical catalog text: what results bind themselves to.
    Canonical: sorted keys, no whitespace, non-finite numbers as Python's
    NaN / Infinity tokens. It is hashed, never written, so it need not be
    strict JSON, and the C encoder keeps it cheap for every validation."""
    import hashlib
    import json

    from ..core.scenario import catalog_document
    text = json.dumps(catalog_document(catalog() if scenarios is None else scenarios),
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

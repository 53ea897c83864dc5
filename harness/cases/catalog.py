"""The scenario catalog: every op's own scenarios, in registry order, each
bound to its op record.

An op record with `variants` gets each of its scenarios once per variant,
named .../<suffix> (gather_mm: .../sorted and .../unsorted); the rest appear
once. Values are small integers (or dyadic fractions) so float32 arithmetic
is exact and a mismatch cannot be rounding.
"""
from __future__ import annotations

import dataclasses

from .. import ops
from ..core.scenario import Scenario
from . import bind


def variants(s: Scenario, info) -> list:
    if not info.variants:
        return [s]
    return [dataclasses.replace(s, name=f"{s.name}/{suffix}", params={**s.params, **params})
            for suffix, params in info.variants]


def base_scenarios() -> list:
    """Every registered op's own scenarios, bound, before variants."""
    out = []
    for info in ops.registry().values():
        mine = info.catalog_scenarios()
        wrong = sorted({s.op for s in mine} - {info.name})
        if wrong:
            raise ValueError(f"op {info.name!r} lists scenarios of other ops: {wrong}")
        out += [bind(s) for s in mine]
    names = [s.name for s in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(f"duplicate scenario names: {sorted(dupes)}")
    return out


def catalog() -> list:
    return [v for s in base_scenarios() for v in variants(s, s.info)]


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

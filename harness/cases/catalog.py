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


# The catalog of the registry in use: (that registry dict, its records, the scenarios,
# what is derived from them: its digest).
# Building it calls every op's scenario builders (about 0.8 s); a run, the gate, the
# validator's table and the tests ask for it many times. Scenarios are frozen records of
# tuples, so one list of them can be shared; each caller gets its own list. A registry
# swapped for another (a plugin op, a test's wrong VJP) gets its own catalog.
_BUILT: list = []


def _same(built: tuple, registry: dict) -> bool:
    reg, records = built[:2]
    return reg is registry and len(records) == len(registry) and all(
        a is b for a, b in zip(records, registry.values()))


def catalog() -> list:
    registry = ops.registry()
    if not (_BUILT and _same(_BUILT[0], registry)):
        scenarios = tuple(v for s in base_scenarios() for v in variants(s, s.info))
        _BUILT[:] = [(registry, tuple(registry.values()), scenarios, {})]
    return list(_BUILT[0][2])


def digest(scenarios=None) -> str:
    """SHA-256 of the canonical catalog text: what results bind themselves to.
    Canonical: sorted keys, no whitespace, non-finite numbers as Python's
    NaN / Infinity tokens. It is hashed, never written, so it need not be
    strict JSON, and the C encoder keeps it cheap for every validation."""
    import hashlib
    import json

    from ..core.scenario import catalog_document
    if scenarios is None:   # the catalog's own digest, once per build of it
        catalog()
        memo = _BUILT[0][3]
        if "digest" not in memo:
            memo["digest"] = digest(list(_BUILT[0][2]))
        return memo["digest"]
    text = json.dumps(catalog_document(scenarios), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

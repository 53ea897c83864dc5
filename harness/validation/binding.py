"""Catalog binding: whether a results file's record set is this validator's catalog.

A results file says what produced it (`provenance`: harness, catalog digest,
command line, selection). Nothing recorded there can switch a check off; it
can only decide which claim the file makes, and the verdict names the claim:

* bound: the file claims the catalog (no scenario file), under the recorded
  filter, made by the catalog whose digest this validator computes. Then the
  records on every recorded device must be exactly the catalog's scenarios
  under that filter, and the scenarios exactly theirs. Anything else fails.
* unbound: the file makes no such claim (scenarios from a file, another
  catalog, no provenance). The verdict says "unbound: these records are not
  claimed to be the catalog", and `--expect pass|defects` refuses it unless
  --allow-unbound is given.

Either way, a scenario that carries the name of a catalog scenario must be that
scenario, byte for byte: a name is never a claim the validator leaves unchecked.
A `run` results file must carry its provenance.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import __version__
from ..cases import selection
from . import catalog_table
from .groups import Group

REQUIRED_FOR = ("run",)


@dataclass(frozen=True)
class Binding:
    """What one results file is shown to be."""
    file: str
    bound: bool
    scope: str          # what the records are, in words ("the whole catalog (641 scenarios)")
    full: bool = False  # bound to the whole catalog, no filter


def _unbound(name: str, why: str) -> Binding:
    return Binding(name, False, f"unbound: these records are not claimed to be the catalog ({why})")


def _text_hash(d: dict) -> str:
    return catalog_table.text_hash(catalog_table.canonical(d))


def _names_are_catalog(group: Group, name: str, data: dict, table, digest) -> None:
    """Every scenario under a catalog name is that catalog scenario."""
    for sname, d in sorted((data.get("scenarios") or {}).items()):
        want = table.hashes.get(sname)
        if want is not None:
            got = digest(d) if digest else _text_hash(d)
            group.check(got == want, f"{name}: scenario {sname!r} carries the name of a catalog scenario "
                                     "but differs from it (inputs, wrt, tags or flags)")


def check(group: Group, name: str, data: dict, table, digest=None) -> Binding:
    """Add the binding checks of one results file (already schema-checked) to its group;
    `digest`: a scenario dict's sha256 (of its canonical text), when the caller has them."""
    _names_are_catalog(group, name, data, table, digest)
    prov = data.get("provenance")
    if prov is None:
        if data.get("kind") in REQUIRED_FOR:
            group.fail(f"{name}: no provenance (which harness and catalog produced these records)")
        return _unbound(name, "the file records no provenance")
    harness = prov["harness"]
    if prov["catalog_digest"] != table.digest:
        if harness["version"] == __version__ and harness["commit"] is None:
            group.fail(f"{name}: recorded catalog digest {prov['catalog_digest'][:12]} is not the catalog of "
                       f"harness {__version__} ({table.digest[:12]}), the version the file claims")
        return _unbound(name, f"made with catalog {prov['catalog_digest'][:12]} of harness {harness['version']}, "
                              f"not this validator's {table.digest[:12]}: validate it with that harness")
    sel = prov["selection"]
    if sel["scenarios"] is not None:
        return _unbound(name, f"scenarios from a file, {sel['scenarios']!r}")
    return _bind(group, name, data, table, sel["filter"])


def _bind(group: Group, name: str, data: dict, table, flt) -> Binding:
    want = [n for n in table.names if selection.matches(n, flt)]
    want_set = set(want)
    extra = sorted(set(data["scenarios"]) - want_set)
    group.check(not extra, f"{name}: {len(extra)} scenarios are not the catalog's under filter {flt!r} "
                           f"(first {extra[:1]})")
    records = data["records"]
    devices = sorted({r["device"] for r in records})
    for dev in devices or ["(none)"]:
        have = [r["scenario"] for r in records if r["device"] == dev]
        missing, more = sorted(want_set - set(have)), sorted(set(have) - want_set)
        group.check(not missing and not more and len(have) == len(want_set),
                    f"{name}: records on {dev} are not the catalog under filter {flt!r}: "
                    f"{len(missing)} missing (first {missing[:1]}), {len(more)} extra (first {more[:1]})")
    where = " and ".join(devices) or "no device"
    if flt:
        return Binding(name, True, f"bound: the catalog under filter {flt!r} ({len(want)} of its "
                                   f"{len(table.names)} scenarios) on {where}")
    return Binding(name, True, f"bound: the whole catalog ({len(want)} scenarios) on {where}", full=True)

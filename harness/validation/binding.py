"""Catalog binding: a results file says which harness and catalog produced it
(its `provenance`); the validator regenerates the catalog with its own code
and holds the records to it.

When the recorded catalog digest is this harness's: every record's scenario
must be the catalog's scenario of that name (inputs, wrt, tags, everything),
and the records must cover exactly the catalog under the recorded filter, on
every recorded device. When it is not (another harness version, a plugin op,
scenarios from a file), one NOTE line says the catalog was not checked and
why: never a silent pass. A `run` results file must carry its provenance.
"""
from __future__ import annotations

from .. import __version__
from ..cases import catalog as catalog_mod
from ..cases import selection
from .groups import Group

REQUIRED_FOR = ("run",)


class _Catalog:
    """The catalog and its digest, built once per validation."""

    def __init__(self):
        self._built = None

    def get(self) -> tuple:
        if self._built is None:
            scenarios = catalog_mod.catalog()
            self._built = ({s.name: s for s in scenarios}, catalog_mod.digest(scenarios))
        return self._built


CATALOG = _Catalog()


def _provenance_problems(prov) -> list:
    if not isinstance(prov, dict):
        return ["provenance is not an object"]
    harness, sel = prov.get("harness"), prov.get("selection")
    out = []
    if not isinstance(harness, dict) or not isinstance(harness.get("version"), str):
        out.append("provenance.harness.version missing")
    if not isinstance(prov.get("catalog_digest"), str) or len(prov["catalog_digest"]) != 64:
        out.append("provenance.catalog_digest is not a SHA-256")
    if not isinstance(prov.get("command"), list) or not all(isinstance(a, str) for a in prov["command"]):
        out.append("provenance.command is not a list of strings")
    if not isinstance(sel, dict) or not all(sel.get(k) is None or isinstance(sel.get(k), str)
                                            for k in ("filter", "scenarios")):
        out.append("provenance.selection is not {filter, scenarios}")
    return out


def check(group: Group, name: str, data: dict) -> None:
    """Add the binding checks of one results file to its group."""
    prov = data.get("provenance")
    if prov is None:
        if data.get("kind") in REQUIRED_FOR:
            group.fail(f"{name}: no provenance (which harness and catalog produced these records)")
        else:
            group.note(f"{name}: catalog not checked: the file records no provenance (kind {data.get('kind')!r})")
        return
    problems = _provenance_problems(prov)
    if not group.item(problems, f"{name}: provenance"):
        return
    by_name, digest = CATALOG.get()
    recorded = prov["harness"]
    if prov["catalog_digest"] != digest:
        _different(group, name, prov, recorded, digest)
        return
    _bind(group, name, data, by_name, prov["selection"])


def _different(group, name, prov, recorded, digest) -> None:
    if recorded.get("version") == __version__ and recorded.get("commit") is None:
        group.fail(f"{name}: recorded catalog digest {prov['catalog_digest'][:12]} is not the catalog of "
                   f"harness {__version__} ({digest[:12]}), the version the file claims")
        return
    group.note(f"{name}: catalog not checked: recorded catalog {prov['catalog_digest'][:12]} (harness "
               f"{recorded.get('version')}, commit {str(recorded.get('commit'))[:12]}) is not this "
               f"validator's {digest[:12]} (harness {__version__})")


def _bind(group, name, data, by_name, sel) -> None:
    scenarios = data.get("scenarios") or {}
    from_file = sel.get("scenarios") is not None
    for sname, d in sorted(scenarios.items()):
        want = by_name.get(sname)
        if want is None:
            group.check(from_file, f"{name}: scenario {sname!r} is not in the catalog (and no scenario file "
                                   "was recorded)")
        else:
            group.check(want.to_dict() == d, f"{name}: scenario {sname!r} differs from the catalog's "
                                             "scenario of that name (inputs, wrt, tags or flags)")
    if from_file:
        group.note(f"{name}: the record set is not checked against the catalog: scenarios came from "
                   f"{sel['scenarios']!r}")
        return
    want_names = {s for s in by_name if selection.matches(s, sel.get("filter"))}
    devices = sorted({r.get("device") for r in data.get("records") or [] if isinstance(r, dict)})
    for dev in devices or ["(none)"]:
        have = {r.get("scenario") for r in data.get("records") or []
                if isinstance(r, dict) and r.get("device") == dev}
        missing, extra = sorted(want_names - have), sorted(have - want_names)
        group.check(not missing and not extra,
                    f"{name}: records on {dev} are not the catalog under filter {sel.get('filter')!r}: "
                    f"{len(missing)} missing (first {missing[:1]}), {len(extra)} extra (first {extra[:1]})")

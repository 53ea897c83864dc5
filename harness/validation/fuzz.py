"""Fuzz findings: each finding's records recomputed like run records, and each
finding listed in findings.json has its record file and a reproducer.

Reproducer scripts are only looked up by name; they are never run.
"""
from __future__ import annotations

from pathlib import PurePosixPath

from ..core import jsonio
from . import records


def _listed_files(index, folder: str) -> list | None:
    """Files findings.json says each finding has, when its shape says which."""
    if isinstance(index, dict) and isinstance(index.get("findings"), list):
        index = index["findings"]
    if not isinstance(index, list):
        return None
    out = []
    for f in index:
        sig = f.get("signature") if isinstance(f, dict) else f
        paths = (f.get("files") if isinstance(f, dict) else None) or {"record": f"findings/{sig}.json"}
        out += [(sig, folder + str(p)) for p in paths.values()]
    return out


def _expected_problems(finding: dict, rc) -> list:
    """A finding's own copy of the expected values must be the reference's."""
    exp = finding.get("expected")
    if not isinstance(exp, dict):
        return []
    _, want = rc.get(finding["scenario"])
    return [f"expected[{k!r}] differs from the recomputed float64 reference" for k, v in sorted(exp.items())
            if k not in want or not records.agree(v, want[k])]


def _records(finding: dict) -> list:
    if isinstance(finding.get("records"), list):
        return finding["records"]
    if isinstance(finding.get("record"), dict):
        return [finding["record"]]
    return [finding] if "checks" in finding else []


def check_findings(group, folder: str, files: dict, rc) -> None:
    index = jsonio.member(files, folder + "findings.json")
    listed = _listed_files(index, folder)
    record_files = sorted(n for n in files if n.startswith(folder + "findings/") and n.endswith(".json"))
    for sig, path in listed or []:
        group.check(path in files, f"{folder}findings.json: finding {sig!r}: {path} is missing")
    scripts = [PurePosixPath(n).name for n in files if n.endswith(".py")]
    for name in record_files:
        stem = PurePosixPath(name).stem
        group.check(any(stem in s for s in scripts), f"{name}: no reproducer script named after {stem!r}")
        finding = jsonio.member(files, name)
        if not isinstance(finding, dict) or not isinstance(finding.get("scenario"), dict):
            group.fail(f"{name}: no scenario recorded")
            continue
        try:
            group.item(_expected_problems(finding, rc), f"{name}: expected values")
        except Exception as e:   # a malformed scenario is a failed check, not a crash
            group.fail(f"{name}: scenario cannot be recomputed ({type(e).__name__}: {e})")
            continue
        for n, rec in enumerate(_records(finding)):
            if isinstance(rec, dict) and isinstance(rec.get("checks"), list):
                records.check_record(group, f"{name} record {n}", finding["scenario"], rec, rc,
                                              strict=False)



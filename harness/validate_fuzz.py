"""Fuzz findings: each finding's records recomputed like run records, and each
finding listed in findings.json has its record file and a reproducer.

Reproducer scripts are only looked up by name; they are never run.
"""
from __future__ import annotations

import json
from pathlib import PurePosixPath

from . import validate_records


def _signatures(index) -> list | None:
    """Signatures named by findings.json, when its shape says which they are."""
    if isinstance(index, dict) and isinstance(index.get("findings"), list):
        index = index["findings"]
    if isinstance(index, list):
        sigs = [f.get("signature") if isinstance(f, dict) else f for f in index]
        return sigs if all(isinstance(s, str) for s in sigs) else None
    return None


def _records(finding: dict) -> list:
    if isinstance(finding.get("records"), list):
        return finding["records"]
    if isinstance(finding.get("record"), dict):
        return [finding["record"]]
    return [finding] if "checks" in finding else []


def check_findings(group, folder: str, files: dict, rc) -> None:
    index = _load(files, folder + "findings.json")
    sigs = _signatures(index)
    record_files = sorted(n for n in files if n.startswith(folder + "findings/") and n.endswith(".json"))
    if sigs is not None:
        for sig in sigs:
            group.check(f"{folder}findings/{sig}.json" in files,
                        f"{folder}findings.json: finding {sig!r} has no findings/{sig}.json")
    scripts = [PurePosixPath(n).name for n in files if n.endswith(".py")]
    for name in record_files:
        stem = PurePosixPath(name).stem
        group.check(any(stem in s for s in scripts), f"{name}: no reproducer script named after {stem!r}")
        finding = _load(files, name)
        if not isinstance(finding, dict) or not isinstance(finding.get("scenario"), dict):
            group.fail(f"{name}: no scenario recorded")
            continue
        for n, rec in enumerate(_records(finding)):
            if isinstance(rec, dict) and isinstance(rec.get("checks"), list):
                validate_records.check_record(group, f"{name} record {n}", finding["scenario"], rec, rc,
                                              strict=False)


def _load(files: dict, name: str):
    try:
        return json.loads(files[name])
    except (KeyError, ValueError, UnicodeDecodeError):
        return None

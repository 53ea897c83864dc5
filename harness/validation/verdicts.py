"""What the evidence shows, beside whether it is intact: one line per evidence
file, and the set of claims `validate_artifacts.py --expect` can demand.

    evidence: mlx 0.32.4 cpu, 78 pass, 25 fail, 2 error (defects present)
    gate: pristine reproduced 27/27 expected defects, patched passed 92/92
    fuzz: 19 findings from 12822 cases on mlx 0.32.4 cpu (defects present)
    versions: repeated-left-indices first affected 0.26.3, ...

Computed from the same files the checks validated (a line is only as good
as the checks above it, which the caller prints first).
"""
from __future__ import annotations

from ..core import jsonio
from ..evidence import paths

EXPECTATIONS = ("pass", "defects", "gate-pass")




def _mlx(env) -> str:
    return str((env or {}).get("mlx") or "unknown") if isinstance(env, dict) else "unknown"


def _results_line(name: str, data: dict) -> tuple:
    s = data.get("summary") or {}
    counts = ", ".join(f"{s.get(k, 0)} {k}" for k in ("pass", "fail", "error", "crashed") if s.get(k))
    devices = " ".join(map(str, s.get("devices") or []))
    bad = sum(int(s.get(k, 0) or 0) for k in ("fail", "error", "crashed"))
    shows = {"defects"} if bad else ({"pass"} if s.get("total") else set())
    what = "defects present" if bad else ("all pass" if s.get("total") else "no records")
    where = "" if paths.basename(name) == paths.RESULTS else f" {name}:"
    return f"evidence:{where} mlx {_mlx(data.get('environment'))} {devices}, {counts or '0 records'} ({what})", shows


def _gate_line(comp: dict) -> tuple:
    rows = [r for r in comp.get("rows") or [] if isinstance(r, dict) and r.get("in_scope", True)]
    expected = [r for r in rows if r.get("expects_defect")]
    reproduced = sum(r.get("pristine") != "pass" for r in expected)
    passed = sum(r.get("patched") == "pass" for r in rows)
    ok = bool(rows) and reproduced == len(expected) and passed == len(rows)
    line = (f"gate: pristine reproduced {reproduced}/{len(expected)} expected defects, "
            f"patched passed {passed}/{len(rows)}")
    return line, ({"gate-pass"} if ok else set())


def _fuzz_line(files: dict, name: str, index) -> tuple:
    camp = jsonio.member(files, paths.folder(name) + paths.CAMPAIGN) or {}
    stats = camp.get("stats") or {} if isinstance(camp, dict) else {}
    n = len(index) if isinstance(index, list) else 0
    env = jsonio.member(files, paths.folder(name) + paths.ENVIRONMENT)
    note = ", interrupted" if isinstance(camp, dict) and camp.get("interrupted") else ""
    line = (f"fuzz: {n} findings from {stats.get('cases', '?')} cases on mlx {_mlx(env)} "
            f"{camp.get('device', '?') if isinstance(camp, dict) else '?'}{note} "
            f"({'defects present' if n else 'no defect found'})")
    return line, ({"defects"} if n else {"pass"})


def _versions_line(doc: dict) -> tuple:
    first = doc.get("first_affected") or {}
    parts = [f"{pid} first affected {(v or {}).get('first') or 'none'}" for pid, v in sorted(first.items())]
    return "versions: " + ("; ".join(parts) or "no probes"), set()


def lines(files: dict) -> tuple:
    """(verdict lines, claims the evidence supports: a subset of EXPECTATIONS)."""
    out, shows, gates = [], [], []
    for name in sorted(files):
        base = paths.basename(name)
        data = jsonio.member(files, name) if name.endswith(".json") else None
        if not isinstance(data, (dict, list)):
            continue
        if paths.is_results(name) and isinstance(data, dict) and isinstance(data.get("records"), list):
            line, claims = _results_line(name, data)
        elif base == paths.COMPARISON and isinstance(data, dict):
            line, claims = _gate_line(data)
            gates.append("gate-pass" in claims)
        elif base == paths.FINDINGS:
            line, claims = _fuzz_line(files, name, data)
        elif base == paths.VERSIONS and isinstance(data, dict):
            line, claims = _versions_line(data)
        else:
            continue
        out.append(line)
        shows.append(claims)
    return out, _supported(shows, gates)


def _supported(shows: list, gates: list) -> set:
    """pass: something passed and nothing showed a defect; defects: some file shows
    one; gate-pass: every gate table in the evidence passes."""
    out = set()
    if any("defects" in c for c in shows):
        out.add("defects")
    elif any("pass" in c for c in shows):
        out.add("pass")
    if gates and all(gates):
        out.add("gate-pass")
    return out

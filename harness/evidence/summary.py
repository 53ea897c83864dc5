"""SUMMARY.md: a factual record of what an evidence directory holds.

Generated only from the evidence files themselves (so the validator can
regenerate it and compare): environment, one table per results file, pristine
vs patched, fuzz findings, version matrices, the commands to reproduce, the
probe outputs. It states facts and commands; it is not an issue text.

Bundles travel between people, so the summary cannot be turned against its
reader: every text that came from a file or from MLX is shown inside a code
span (or a fence longer than any backtick run in it), and the commands are
rendered only from fixed templates whose arguments are checked (a device from
a fixed set, an integer seed, a version number, a path of safe characters that
the evidence lists). A recorded command line is never echoed.
"""
from __future__ import annotations

import json
import math
import re

import numpy as np

from ..core import verdict
from . import paths, probes, strict
from .text import visible

NAME = paths.SUMMARY
SAFE_PATH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+=,:/-]*$")
VERSION = re.compile(r"^\d+(\.\d+){0,3}([a-z]+\d*)?$")
DEVICES = ("cpu", "gpu", "all")




def code(x) -> str:
    """Any text as an inline code span: every control, format (bidirectional override,
    zero width), NEL or separator character written as an escape (evidence/text.py),
    table pipes escaped, and a backtick fence longer than any backtick run inside."""
    text = visible(x).replace("|", "\\|")
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str) -> list:
    """A fenced block that no line of `text` can close early, each line made visible."""
    clean = "\n".join(visible(line) for line in text.split("\n"))
    ticks = "`" * max(3, max((len(m) for m in re.findall(r"`+", clean)), default=0) + 1)
    return [ticks, clean, ticks]


def _table(head: list, rows: list) -> list:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(rows_cell for rows_cell in row) + " |" for row in rows]


def _num(x) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "?"
    return format(x, ".8g") if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def _at(values, index):
    try:
        return _num(np.asarray(values, dtype=np.float64)[tuple(int(i) for i in index)])
    except (IndexError, TypeError, ValueError):
        return "?"


def record_row(rec: dict) -> list:
    """scenario, device, expected, observed, error, verdict for one record (cells)."""
    status = rec.get("status") if rec.get("status") in verdict.STATUSES else "?"
    tags = ", ".join(map(str, rec.get("defect_tags") or []))
    mark = status + (f" (tags: {code(tags)})" if rec.get("expects_defect") and tags else "")
    head = [code(rec.get("scenario")), code(rec.get("device"))]
    if rec.get("error"):
        return head + ["-", "-", code(rec["error"]), mark]
    c = verdict.worst(rec.get("checks") or [])
    if c is None:
        return head + ["-", "-", "no check recorded", mark]
    idx = c.get("worst_index")
    if idx is None or c.get("worst_error") is None:
        return head + [code(f"{c.get('name')} {c.get('expected_shape')}"), code(c.get("observed_shape")),
                       code(c.get("reason")), mark]
    where = code(f"{c.get('name')}[{','.join(map(str, idx))}]")
    return head + [f"{where} = {_at(c.get('expected'), idx)}", _at(c.get("observed"), idx),
                   f"{_num(c.get('worst_error'))} (tol {_num(c.get('worst_tolerance'))})", mark]


def _environment(files: dict) -> list:
    out = []
    for name in sorted(n for n in files if paths.basename(n) == paths.ENVIRONMENT):
        env = strict.member(files, name)
        if not isinstance(env, dict):
            continue
        rows = [[code(k), code(json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v)]
                for k, v in sorted(env.items())]
        out += [f"### {code(name)}", ""] + _table(["key", "value"], rows) + [""]
    return ["## Environment", ""] + (out or ["(no environment.json)", ""])


def _run_tables(files: dict, result_names: list) -> list:
    out = []
    for name in result_names:
        data = strict.member(files, name)
        if not isinstance(data, dict) or not isinstance(data.get("records"), list):
            continue
        s = data.get("summary") if isinstance(data.get("summary"), dict) else {}
        counts = ", ".join(f"{_num(s.get(k, 0))} {k}" for k in verdict.STATUSES)
        out += [f"## Results: {code(name)}", "",
                f"{_num(s.get('total', len(data['records'])))} records ({counts}); devices: "
                f"{code(', '.join(map(str, s.get('devices') or [])))}. Expected and observed are the worst "
                "element of the failing (else closest) check; error is |observed - expected| "
                "and its tolerance, or the exception MLX raised.", ""]
        out += _table(["scenario", "device", "expected", "observed", "error", "verdict"],
                      [record_row(r) for r in data["records"] if isinstance(r, dict)]) + [""]
    return out


def _statuses(data) -> dict:
    recs = data.get("records") if isinstance(data, dict) else None
    return {(r.get("scenario"), r.get("device")): r.get("status") for r in recs or [] if isinstance(r, dict)}


def _pristine_vs_patched(files: dict, folder: str) -> list:
    comp = strict.member(files, folder + paths.COMPARISON)
    if isinstance(comp, dict) and isinstance(comp.get("rows"), list):
        rows = [[code(r.get("scenario")), code(r.get("device")), code(r.get("pristine")), code(r.get("patched"))]
                for r in comp["rows"] if isinstance(r, dict)]
    else:
        pri = _statuses(strict.member(files, folder + paths.results_for("pristine")))
        pat = _statuses(strict.member(files, folder + paths.results_for("patched")))
        rows = [[code(k[0]), code(k[1]), code(pri.get(k, "-")), code(pat.get(k, "-"))]
                for k in sorted(set(pri) | set(pat), key=str)]
    return [f"## Pristine vs patched ({code(folder or './')})", ""] + \
        _table(["scenario", "device", "pristine", "patched"], rows) + [""]


def _findings(files: dict, name: str) -> list:
    index = strict.member(files, name)
    rows = [[code(e.get("signature")), code(e.get("scenario_name")), code(e.get("oracle")), code(e.get("kind")),
             code(e.get("device"))] for e in index or [] if isinstance(e, dict)]
    return [f"## Fuzz findings: {code(name)}", "", f"{len(rows)} findings; each has a record file and a "
            "reproducer script (commands below).", ""] + \
        _table(["signature", "scenario", "oracle", "kind", "device"], rows) + [""]


def _versions(files: dict, name: str) -> list:
    doc = strict.member(files, name)
    if not isinstance(doc, dict):
        return []
    ids = [p.get("id") for p in doc.get("probes") or [] if isinstance(p, dict)]
    rows = []
    for r in doc.get("releases") or []:
        cells = (r.get("probes") or {}) if isinstance(r, dict) else {}
        rows.append([code(r.get("version") if isinstance(r, dict) else "?")] +
                    [code(f"{(cells.get(i) or {}).get('status')} (exit {(cells.get(i) or {}).get('exit_code')})")
                     for i in ids])
    first = [f"- {code(i)}: {code(((doc.get('first_affected') or {}).get(i) or {}).get('text'))}" for i in ids]
    return [f"## Version matrix: {code(name)}", ""] + _table(["release"] + [code(i) for i in ids], rows) + \
        [""] + first + [""]


def _handoff(files: dict, name: str) -> list:
    doc = strict.member(files, name)
    if not isinstance(doc, dict):
        return []
    rows = []
    for e in doc.get("findings") or []:
        if isinstance(e, dict):
            got = e.get("files") if isinstance(e.get("files"), dict) else {}
            rows.append([code(e.get("id")), code(e.get("status")), code(e.get("reproducer_exit")),
                         code(got.get("patch", "none")), code(got.get("regression_test", "none"))])
    return [f"## Handoff: {code(name)}", "", f"{len(rows)} findings handed over on MLX {code(doc.get('mlx'))} "
            f"({code(doc.get('platform'))}); each folder holds ISSUE.md (MLX's bug-report form), the "
            "reproducer and, for a fixed finding, its patch and regression test.", ""] + \
        _table(["finding", "status", "reproducer exit", "patch", "regression test"], rows) + [""]


# --- commands: fixed templates, checked arguments ------------------------------------------

def _sweep(files: dict, name: str) -> list:
    doc = strict.member(files, name)
    if not isinstance(doc, dict):
        return []
    counts = (doc.get("summary") or {}).get("by_status") if isinstance(doc.get("summary"), dict) else None
    rows = []
    for f in doc.get("findings") or []:
        if isinstance(f, dict):
            sig = f.get("signature") if isinstance(f.get("signature"), list) else []
            rows.append([code(x) for x in sig] + [code(f.get("cases")), code(f.get("explained") or "NEW")])
    head = ["function", "transform", "corner", "symptom", "cases", "registered class"]
    return [f"## Sweep: {code(name)}", "", f"Cases by status: {code(counts)}", ""] + \
        (_table(head, rows) if rows else ["No findings."]) + [""]


def _gradcheck(files: dict, name: str) -> list:
    doc = strict.member(files, name)
    report = doc.get("report") if isinstance(doc, dict) else None
    if not isinstance(report, dict):
        return []
    rows = [[code(c.get("transform")), code(c.get("dtype")), code(c.get("input")), code(c.get("output")),
             code(c.get("status"))] for c in report.get("checks") or [] if isinstance(c, dict)]
    return [f"## gradcheck: {code(doc.get('target'))} ({code(name)})", ""] + \
        _table(["transform", "dtype", "input", "output", "verdict"], rows) + [""]


def _version(v) -> str | None:
    return v if isinstance(v, str) and VERSION.match(v) else None


def _install_line(env) -> str:
    pk = (env or {}).get("packages") if isinstance(env, dict) else None
    pk = pk if isinstance(pk, dict) else {}
    if _version(pk.get("mlx-cpu")):
        return f"python3 -m pip install 'mlx[cpu]=={pk['mlx-cpu']}'"
    if _version(pk.get("mlx")):
        return f"python3 -m pip install 'mlx=={pk['mlx']}'"
    return "python3 -m pip install mlx   # version not recorded"


def _run_command(files: dict, name: str) -> list:
    data = strict.member(files, name)
    if not isinstance(data, dict) or paths.basename(name) != paths.RESULTS:
        return []
    devices = (data.get("summary") or {}).get("devices") if isinstance(data.get("summary"), dict) else None
    device = devices[0] if isinstance(devices, list) and len(devices) == 1 and devices[0] in DEVICES else "all"
    return [_install_line(data.get("environment")),
            f"mlx-vjpcheck run --device {device} --out run   # add --filter PATTERN for a subset"]


def _native_command(files: dict, folder: str) -> list:
    env = strict.member(files, folder + paths.ENVIRONMENT)
    native = env.get("native") if isinstance(env, dict) and isinstance(env.get("native"), dict) else {}
    opt = native.get("opt") if native.get("opt") in ("O0", "as-built") else "as-built"
    where = folder + paths.COMMANDS if SAFE_PATH.match(folder + paths.COMMANDS) else paths.COMMANDS
    return [f"python3 build_and_test.py --mlx-source MLX_CHECKOUT --mlx-build ITS_STATIC_BUILD --opt {opt}"
            f"   # every command, exit code and log: {where}"]


def _int(x) -> str | None:
    return str(x) if isinstance(x, int) and not isinstance(x, bool) and abs(x) < 2**63 else None


def _seconds(x) -> str | None:
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and 0 < x < 1e7
    return _num(x) if ok else None


def _fuzz_command(files: dict, name: str) -> list:
    c = strict.member(files, name)
    if not isinstance(c, dict) or _int(c.get("seed")) is None or _seconds(c.get("budget_s")) is None:
        return []
    device = c.get("device") if c.get("device") in ("cpu", "gpu") else "cpu"
    return [f"mlx-vjpcheck fuzz --seed {_int(c['seed'])} --time {_seconds(c['budget_s'])} "
            f"--device {device} --out findings"]


def _versions_command(files: dict, name: str) -> list:
    doc = strict.member(files, name)
    if not isinstance(doc, dict):
        return []
    rng = doc.get("range") if isinstance(doc.get("range"), dict) else {}
    opts = "".join(f" --{k} {rng[k]}" for k in ("from", "to") if _version(rng.get(k)))
    only = [v for v in rng.get("only") or [] if _version(v)] if isinstance(rng.get("only"), list) else []
    opts += (" --only " + " ".join(only)) if only else ""
    device = doc.get("device") if doc.get("device") in ("cpu", "gpu") else "cpu"
    return [f"mlx-vjpcheck versions{opts} --device {device} --out versions"]


def _reproducers(files: dict) -> list:
    """Only the reproducers a findings index lists, with safe paths that exist."""
    out = []
    for name in sorted(n for n in files if paths.basename(n) == paths.FINDINGS):
        for e in strict.member(files, name) or []:
            rel = (e.get("files") or {}).get("reproducer") if isinstance(e, dict) else None
            path = paths.folder(name) + str(rel) if isinstance(rel, str) else ""
            if path in files and SAFE_PATH.match(path) and path.endswith("_repro.py") and ".." not in path:
                out.append(f"python3 {path} --device cpu   # fuzz reproducer: exit 1 defect present")
    return out


def _probe_commands(files: dict) -> list:
    out = []
    for n in sorted(n for n in files if n.startswith(probes.FOLDER + "/")):
        parsed = probes.parse_output_name(n)
        if parsed:
            out.append(f"python3 probes/{parsed[0]} --device {parsed[1]}")
    return out


def _commands(files: dict, result_names: list, folders: list) -> list:
    lines = ["python3 -m pip install .   # in a checkout of mlx-vjpcheck (or pip install its wheel): the command",
             "mlx-vjpcheck validate BUNDLE.zip   # any machine, numpy only, no MLX needed",
             "mlx-vjpcheck replay BUNDLE.zip     # on a machine with MLX: execute it again"]
    for name in result_names:
        lines += _run_command(files, name)
    for folder in folders:
        lines += _native_command(files, folder)
    for name in sorted(n for n in files if paths.basename(n) == paths.CAMPAIGN):
        lines += _fuzz_command(files, name)
    for name in sorted(n for n in files if paths.basename(n) == paths.VERSIONS):
        lines += _versions_command(files, name)
    lines += _reproducers(files) + _probe_commands(files)
    return ["## Commands to reproduce", ""] + fence("\n".join(lines)) + [""]


def _probes(files: dict) -> list:
    names = sorted(n for n in files if n.startswith(probes.FOLDER + "/"))
    out = ["## Probe outputs", ""]
    if not names:
        return out + ["(no probe outputs recorded)", ""]
    for n in names:
        out += [f"### {code(n)}", ""] + fence(files[n].decode("utf-8", "replace").rstrip("\n")) + [""]
    return out


def render(files: dict) -> str:
    files = strict.as_files(files)
    results_names = sorted(n for n in files if paths.is_results(n))
    native = sorted({paths.folder(n) for n in files if paths.basename(n) == paths.COMPARISON})
    lines = ["# Evidence summary", "",
             "Generated by `mlx-vjpcheck bundle` from the files of this bundle; "
             "`mlx-vjpcheck validate` (or `python3 validate_artifacts.py` in a checkout) regenerates it and "
             "checks every number below. Texts from the evidence are shown as code with control and "
             "direction characters escaped; commands come from fixed templates.", ""]
    lines += _environment(files) + _run_tables(files, results_names)
    for folder in native:
        lines += _pristine_vs_patched(files, folder)
    for name in sorted(n for n in files if paths.basename(n) == paths.FINDINGS):
        lines += _findings(files, name)
    for name in sorted(n for n in files if paths.basename(n) == paths.VERSIONS):
        lines += _versions(files, name)
    for name in sorted(n for n in files if paths.basename(n) == paths.HANDOFF):
        lines += _handoff(files, name)
    for name in sorted(n for n in files if paths.basename(n) == paths.SWEEP):
        lines += _sweep(files, name)
    for name in sorted(n for n in files if paths.basename(n) == paths.GRADCHECK):
        lines += _gradcheck(files, name)
    folders = sorted({paths.folder(n) for n in files if paths.basename(n) == paths.COMMANDS})
    lines += _commands(files, results_names, folders) + _probes(files)
    return "\n".join(lines).rstrip("\n") + "\n"

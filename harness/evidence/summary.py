"""SUMMARY.md: a factual record of what an evidence directory holds.

Generated only from the evidence files themselves (so the validator can
regenerate it and compare): environment, one table per results file, pristine
vs patched, the commands to reproduce, the probe outputs. It states facts and
commands; it is not an issue text.
"""
from __future__ import annotations

import json
import shlex

import numpy as np

from . import paths, probes
from ..core import jsonio, verdict

NAME = paths.SUMMARY


def _json(files: dict, name: str):
    try:
        return jsonio.loads(files[name])
    except (KeyError, ValueError, UnicodeDecodeError):
        return None


def _cell(x) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def _table(head: list, rows: list) -> list:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _num(x) -> str:
    return format(float(x), ".8g")


def _at(values, index):
    try:
        return _num(np.asarray(values, dtype=np.float64)[tuple(index)])
    except (IndexError, TypeError, ValueError):
        return "?"


def record_row(rec: dict) -> list:
    """scenario, device, expected, observed, error, verdict for one record."""
    status = rec.get("status")
    tags = ", ".join(rec.get("defect_tags") or [])
    mark = f"{status} (tags: {tags})" if rec.get("expects_defect") and tags else status
    if rec.get("error"):
        return [rec.get("scenario"), rec.get("device"), "-", "-", rec["error"], mark]
    c = verdict.worst(rec.get("checks") or [])
    if c is None:
        return [rec.get("scenario"), rec.get("device"), "-", "-", "no check recorded", mark]
    idx = c.get("worst_index")
    if idx is None or c.get("worst_error") is None:
        return [rec.get("scenario"), rec.get("device"), f"{c['name']} {c.get('expected_shape')}",
                f"{c.get('observed_shape')}", c.get("reason"), mark]
    where = f"{c['name']}[{','.join(map(str, idx))}]"
    return [rec.get("scenario"), rec.get("device"), f"{where} = {_at(c.get('expected'), idx)}",
            _at(c.get("observed"), idx),
            f"{_num(c['worst_error'])} (tol {_num(c['worst_tolerance'])})", mark]


def _environment(files: dict) -> list:
    out = []
    for name in sorted(n for n in files if paths.basename(n) == paths.ENVIRONMENT):
        env = _json(files, name)
        if not isinstance(env, dict):
            continue
        rows = [[k, json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v]
                for k, v in sorted(env.items())]
        out += [f"### {name}", ""] + _table(["key", "value"], rows) + [""]
    return ["## Environment", ""] + (out or ["(no environment.json)", ""])


def _run_tables(files: dict, result_names: list) -> list:
    out = []
    for name in result_names:
        data = _json(files, name)
        if not isinstance(data, dict) or not isinstance(data.get("records"), list):
            continue
        s = data.get("summary") or {}
        counts = ", ".join(f"{s.get(k, 0)} {k}" for k in verdict.STATUSES)
        out += [f"## Results: {name}", "",
                f"{s.get('total', len(data['records']))} records ({counts}); devices: "
                f"{', '.join(s.get('devices') or [])}. Expected and observed are the worst "
                "element of the failing (else closest) check; error is |observed - expected| "
                "and its tolerance, or the exception MLX raised.", ""]
        out += _table(["scenario", "device", "expected", "observed", "error", "verdict"],
                      [record_row(r) for r in data["records"] if isinstance(r, dict)]) + [""]
    return out


def _statuses(data) -> dict:
    recs = data.get("records") if isinstance(data, dict) else None
    return {(r.get("scenario"), r.get("device")): r.get("status") for r in recs or [] if isinstance(r, dict)}


def _pristine_vs_patched(files: dict, folder: str) -> list:
    comp = _json(files, folder + paths.COMPARISON)
    if isinstance(comp, dict) and isinstance(comp.get("rows"), list):
        rows = [[r.get("scenario"), r.get("device"), r.get("pristine"), r.get("patched")]
                for r in comp["rows"] if isinstance(r, dict)]
    else:
        pri = _statuses(_json(files, folder + paths.results_for("pristine")))
        pat = _statuses(_json(files, folder + paths.results_for("patched")))
        rows = [[k[0], k[1], pri.get(k, "-"), pat.get(k, "-")] for k in sorted(set(pri) | set(pat), key=str)]
    return [f"## Pristine vs patched ({folder or './'})", ""] + \
        _table(["scenario", "device", "pristine", "patched"], rows) + [""]


def _findings(files: dict, name: str) -> list:
    index = _json(files, name)
    rows = [[e.get("signature"), e.get("scenario_name"), e.get("oracle"), e.get("kind"), e.get("device")]
            for e in index or [] if isinstance(e, dict)]
    return [f"## Fuzz findings: {name}", "", f"{len(rows)} findings; each has a record file and a "
            "reproducer script (commands below).", ""] + \
        _table(["signature", "scenario", "oracle", "kind", "device"], rows) + [""]


def _versions(files: dict, name: str) -> list:
    doc = _json(files, name)
    if not isinstance(doc, dict):
        return []
    ids = [p.get("id") for p in doc.get("probes") or [] if isinstance(p, dict)]
    rows = []
    for r in doc.get("releases") or []:
        cells = (r.get("probes") or {}) if isinstance(r, dict) else {}
        rows.append([r.get("version")] + [f"{(cells.get(i) or {}).get('status')} "
                                          f"(exit {(cells.get(i) or {}).get('exit_code')})" for i in ids])
    first = [f"- {i}: {((doc.get('first_affected') or {}).get(i) or {}).get('text')}" for i in ids]
    return [f"## Version matrix: {name}", ""] + _table(["release"] + ids, rows) + [""] + first + [""]


def _install_line(env: dict) -> str:
    pk = (env or {}).get("packages") or {}
    if "mlx-cpu" in pk:
        return f"python3 -m pip install 'mlx[cpu]=={pk['mlx-cpu']}'"
    if "mlx" in pk:
        return f"python3 -m pip install 'mlx=={pk['mlx']}'"
    return "python3 -m pip install mlx   # version not recorded"


def _run_command(files: dict, name: str) -> list:
    data = _json(files, name)
    if not isinstance(data, dict) or paths.basename(name) != paths.RESULTS:
        return []
    devices = (data.get("summary") or {}).get("devices") or []
    cmd = "mlx-vjpcheck run --device " + (devices[0] if len(devices) == 1 else "all") + " --out run"
    note = (f"   # {len(data.get('scenarios') or {})} scenarios; names in {name} "
            "(add --filter PATTERN for a subset)")
    return [_install_line(data.get("environment")), "python3 -m pip install -e .   # this repository",
            cmd + note]


def _tool_commands(files: dict) -> list:
    """The fuzz campaign and version matrix, from their own records."""
    out = []
    for name in sorted(n for n in files if paths.basename(n) == paths.CAMPAIGN):
        c = _json(files, name) or {}
        if isinstance(c, dict) and "seed" in c:
            out.append(f"mlx-vjpcheck fuzz --seed {c['seed']} --time {c.get('budget_s')} "
                       f"--device {c.get('device', 'cpu')} --out findings")
    for name in sorted(n for n in files if paths.basename(n) == paths.VERSIONS):
        doc = _json(files, name) or {}
        rng = doc.get("range") or {} if isinstance(doc, dict) else {}
        opts = "".join(f" --{k} {rng[k]}" for k in ("from", "to") if rng.get(k))
        if rng.get("only"):
            opts += " --only " + " ".join(map(str, rng["only"]))
        out.append(f"mlx-vjpcheck versions{opts} --device {doc.get('device', 'cpu')} --out versions")
    return out


def _commands(files: dict, result_names: list, folders: list) -> list:
    lines = ["python3 validate_artifacts.py BUNDLE.zip   # any machine, no MLX needed"]
    for name in result_names:
        lines += _run_command(files, name)
    for folder in folders:
        for c in _json(files, folder + paths.COMMANDS) or []:
            if isinstance(c, dict) and isinstance(c.get("argv"), list):
                cwd = f"cd {shlex.quote(str(c['cwd']))} && " if c.get("cwd") else ""
                lines.append(f"{cwd}{shlex.join(map(str, c['argv']))}   # exit {c.get('exit_code')}")
    lines += _tool_commands(files)
    lines += [f"python3 {n}   # fuzz reproducer" for n in sorted(files)
              if n.endswith("_repro.py") or (n.endswith(".py") and "findings/" in n)]
    lines += [line.split(": ", 1)[1] for n in sorted(files) if n.startswith(probes.FOLDER + "/")
              for line in files[n].decode("utf-8", "replace").splitlines()[:1] if line.startswith("command: ")]
    return ["## Commands to reproduce", "", "```"] + lines + ["```", ""]


def _probes(files: dict) -> list:
    names = sorted(n for n in files if n.startswith(probes.FOLDER + "/"))
    out = ["## Probe outputs", ""]
    if not names:
        return out + ["(no probe outputs recorded)", ""]
    for n in names:
        out += [f"### {n}", "", "```", files[n].decode("utf-8", "replace").rstrip("\n"), "```", ""]
    return out


def render(files: dict) -> str:
    results_names = sorted(n for n in files if paths.is_results(n))
    native = sorted({paths.folder(n) for n in files if paths.basename(n) == paths.COMPARISON})
    lines = ["# Evidence summary", "",
             "Generated by `mlx-vjpcheck bundle` from the files of this bundle; "
             "`validate_artifacts.py` regenerates it and checks every number below.", ""]
    lines += _environment(files) + _run_tables(files, results_names)
    for folder in native:
        lines += _pristine_vs_patched(files, folder)
    for name in sorted(n for n in files if paths.basename(n) == paths.FINDINGS):
        lines += _findings(files, name)
    for name in sorted(n for n in files if paths.basename(n) == paths.VERSIONS):
        lines += _versions(files, name)
    folders = sorted({paths.folder(n) for n in files if paths.basename(n) == paths.COMMANDS})
    lines += _commands(files, results_names, folders) + _probes(files)
    return "\n".join(lines).rstrip("\n") + "\n"

"""Native evidence: every recorded command has an exit code and its logs, and
the pristine-vs-patched table follows from the two results files."""
from __future__ import annotations

from ..evidence.safezip import unsafe_path


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _command_problems(c, folder: str, listed: set, ids: set) -> list:
    if not isinstance(c, dict):
        return ["not an object"]
    out = []
    if not isinstance(c.get("id"), str) or not c["id"] or c["id"] in ids:
        out.append(f"id {c.get('id')!r} missing or repeated")
    argv = c.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        out.append("argv is not a non-empty list of strings")
    if not _is_int(c.get("exit_code")):
        out.append(f"exit code {c.get('exit_code')!r} is not an integer")
    if not _is_number(c.get("seconds")):
        out.append(f"seconds {c.get('seconds')!r} is not a number")
    for stream in ("stdout", "stderr"):
        rel = c.get(stream)
        why = unsafe_path(rel) if isinstance(rel, str) else f"no {stream} log path"
        if why:
            out.append(f"{stream}: {why}")
        elif folder + rel not in listed:
            out.append(f"{stream} log {folder + rel} is not in the manifest")
    return out


def check_commands(group, folder: str, data, listed: set) -> None:
    """listed: the manifest's paths that exist with a verified hash."""
    if not isinstance(data, list) or not data:
        group.fail(f"{folder}commands.json: not a non-empty list of commands")
        return
    ids = set()
    for n, c in enumerate(data):
        name = c.get("id") if isinstance(c, dict) else None
        group.item(_command_problems(c, folder, listed, ids), f"{folder}commands.json: command {name or n!r}")
        if isinstance(name, str):
            ids.add(name)


ABSENT = (None, "missing", "absent", "-")


def _statuses(data) -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise ValueError("not a results file")
    return {(r.get("scenario"), r.get("device")): r.get("status") for r in data["records"]
            if isinstance(r, dict)}


def _row_problems(row, pristine: dict, patched: dict) -> list:
    if not isinstance(row, dict):
        return ["not an object"]
    key, out = (row.get("scenario"), row.get("device")), []
    for side, table in (("pristine", pristine), ("patched", patched)):
        want = table.get(key)
        got = row.get(side)
        if (want is None and got not in ABSENT) or (want is not None and got != want):
            out.append(f"{side} {got!r} but results-{side}.json says {want!r}")
    return out


def check_comparison(group, folder: str, data, pristine_data, patched_data) -> None:
    where = f"{folder}comparison.json"
    try:
        pristine, patched = _statuses(pristine_data), _statuses(patched_data)
    except ValueError:
        group.fail(f"{where}: results-pristine.json or results-patched.json unreadable")
        return
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        group.fail(f"{where}: no list of rows")
        return
    keys = []
    for row in rows:
        key = (row.get("scenario"), row.get("device")) if isinstance(row, dict) else None
        keys.append(key)
        group.item(_row_problems(row, pristine, patched), f"{where}: {key}")
    want = set(pristine) | set(patched)
    group.check(len(keys) == len(set(keys)) and set(keys) == want,
                f"{where}: rows do not cover each (scenario, device) of the two results files exactly once")

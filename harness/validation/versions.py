"""Version-matrix evidence (versions.json): each cell's status follows from its
recorded exit code, its logs are in the manifest, the probe scripts recorded
are the ones hashed, and the first affected release and counts follow from
the cells. Probe scripts in the evidence are hashed, never run."""
from __future__ import annotations

from ..evidence import manifest
from ..versions.matrix import ABSENT, CANNOT, PRESENT, SCHEMA, status_of, version_key


def _cell(release: dict, probe_id: str) -> str:
    if (release.get("install") or {}).get("status") != "ok":
        return CANNOT
    return ((release.get("probes") or {}).get(probe_id) or {}).get("status")


def _stdout(c: dict, folder: str, files: dict) -> str:
    data = files.get(folder + str(c.get("stdout")))
    return data.decode("utf-8", errors="replace") if isinstance(data, (bytes, bytearray)) else ""


def _cell_problems(release: dict, probe_id: str, c, folder: str, listed: set, files: dict) -> list:
    if not isinstance(c, dict):
        return ["not an object"]
    code, out = c.get("exit_code"), []
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        return [f"exit code {code!r} is not an integer"]
    installed = (release.get("install") or {}).get("status") == "ok"
    want = status_of(code, _stdout(c, folder, files)) if installed else CANNOT
    if c.get("status") != want:
        out.append(f"status {c.get('status')!r} but exit code {code} gives {want!r}")
    if code is not None:
        for stream in ("stdout", "stderr"):
            if folder + str(c.get(stream)) not in listed:
                out.append(f"{stream} log {c.get(stream)!r} is not in the manifest")
    return out


def _first(releases: list, probe_id: str) -> tuple:
    ordered = sorted(releases, key=lambda r: version_key(r["version"]))
    cells = [(r["version"], _cell(r, probe_id)) for r in ordered]
    i = next((k for k, (_, c) in enumerate(cells) if c == PRESENT), None)
    if i is None:
        return None, None
    clean = [v for v, c in cells[:i] if c == ABSENT]
    return cells[i][0], (clean[-1] if clean else None)


def _probe_files(group, doc, folder, files) -> list:
    ids = []
    for p in doc.get("probes") or []:
        path = folder + str(p.get("file"))
        group.check(path in files and manifest.sha256(files[path]) == p.get("sha256"),
                    f"{folder}versions.json: probe {p.get('id')!r}: {path} missing or not the hashed script")
        ids.append(p.get("id"))
    return ids


def check_versions(group, folder: str, doc, files: dict, listed: set) -> None:
    where = f"{folder}versions.json"
    if doc.get("schema") != SCHEMA:
        group.fail(f"{where}: not a versions record ({SCHEMA})")
        return
    ids, releases = _probe_files(group, doc, folder, files), doc["releases"]
    versions = [r["version"] for r in releases]
    group.check(len(set(versions)) == len(versions), f"{where}: a release is listed twice")
    group.check(set(doc["first_affected"]) == set(ids), f"{where}: first_affected does not name exactly the probes")
    for r in releases:
        log = r.get("install_log")
        group.check(log is None or folder + str(log) in listed,
                    f"{where}: {r.get('version')}: install log {log!r} is not in the manifest")
        for pid in ids:
            c = (r.get("probes") or {}).get(pid)
            group.item(_cell_problems(r, pid, c, folder, listed, files), f"{where}: {r.get('version')} {pid}")
    try:
        for pid in ids:
            first, clean = _first(releases, pid)
            got = (doc.get("first_affected") or {}).get(pid) or {}
            group.check((got.get("first"), got.get("last_unaffected")) == (first, clean),
                        f"{where}: {pid}: first affected {got.get('first')!r} (last unaffected "
                        f"{got.get('last_unaffected')!r}) but the cells give {first!r} ({clean!r})")
    except (KeyError, TypeError, ValueError) as e:
        group.fail(f"{where}: releases cannot be ordered ({e})")
        return
    counts = {s: sum(_cell(r, pid) == s for r in releases for pid in ids) for s in (PRESENT, ABSENT, CANNOT)}
    s = doc.get("summary") or {}
    group.check(s.get("releases") == len(releases) and s.get("cells") == counts,
                f"{where}: summary {s} does not match the cells ({len(releases)} releases, {counts})")

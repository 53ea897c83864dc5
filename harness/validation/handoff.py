"""A handoff directory (`mlx-vjpcheck handoff`): handoff.json lists, per finding,
the files it handed over; each is checked against the defect register and the
packaged series it was written from.

Per finding: the id is a register finding with that op, class and status; the
files are exactly the ones `handoff` writes, present and verified by the
manifest; the reproducer is the register's rendering of it; the patch and the
regression test are byte for byte the packaged ones (patch/ in a checkout,
package data in a wheel); ISSUE.md quotes the reproducer, the root cause and,
for a fixed finding, names its patch and test. No other file sits in the
handoff folder. Numpy only (the register renders reproducers as text).
"""
from __future__ import annotations

from ..cases import register
from ..evidence import manifest, paths, summary
from ..evidence.text import visible

ISSUE = "ISSUE.md"
_OWN = {paths.HANDOFF, manifest.NAME, summary.NAME}


def expected_files(d) -> dict:
    """The files `handoff` writes for finding d, relative to its directory (cli/handoff.py uses this)."""
    files = {"issue": f"{d.id}/{ISSUE}", "reproducer": f"{d.id}/{d.probe.rsplit('/', 1)[-1]}"}
    if d.status == "fixed":
        files["patch"] = f"{d.id}/{d.patch.rsplit('/', 1)[-1]}"
        files["regression_test"] = f"{d.id}/{d.regression_test.rsplit('/', 1)[-1]}"
    return files


def packaged(d) -> dict:
    """role -> the packaged file a fixed finding's handoff copies."""
    if d.status != "fixed":
        return {}
    return {"patch": register.patch_file(d), "regression_test": register.regression_test_file(d)}


def check_handoff(g, folder: str, doc: dict, files, verified: set) -> None:
    defects = {d.id: d for d in register.load()}
    listed, seen = set(), set()
    for e in doc["findings"]:
        fid = e["id"]
        if fid in seen:
            g.fail(f"{folder}{paths.HANDOFF}: {fid!r} is listed twice")
            continue
        seen.add(fid)
        d = defects.get(fid)
        if d is None:
            g.fail(visible(f"{folder}{paths.HANDOFF}: {fid!r} is not a finding of the defect register"))
            continue
        g.check((e["op"], e["class"], e["status"]) == (d.op, d.klass, d.status),
                f"{fid}: op, class or status differ from the register's ({d.op}, {d.klass}, {d.status})")
        want = expected_files(d)
        if e["files"] != want:
            g.fail(visible(f"{fid}: files {e['files']} are not the ones handoff writes ({want})"))
            continue
        listed.update(folder + rel for rel in want.values())
        missing = [folder + rel for rel in want.values() if folder + rel not in verified]
        if missing:
            g.fail(f"{fid}: {missing[0]} is missing or not verified by the manifest")
            continue
        body = {role: files[folder + rel] for role, rel in want.items()}
        reproducer = d.reproducer()
        g.check(body["reproducer"] == reproducer.encode("utf-8"),
                f"{fid}: the reproducer differs from the register's")
        for role, src in packaged(d).items():
            if not src.is_file():
                g.fail(f"{fid}: cannot compare the {role}: this installation lacks {src.name}")
            else:
                g.check(body[role] == src.read_bytes(), f"{fid}: the {role} differs from the packaged {src.name}")
        issue = body["issue"].decode("utf-8", "replace")
        g.check(reproducer.rstrip() in issue, f"{fid}: {ISSUE} does not quote the reproducer")
        g.check(not d.root_cause or d.root_cause in issue, f"{fid}: {ISSUE} does not give the root cause")
        if d.status == "fixed":
            g.check(all(f"`{want[r].rsplit('/', 1)[-1]}`" in issue for r in ("patch", "regression_test")),
                    f"{fid}: {ISSUE} does not name its patch and regression test")
    for name in sorted(files):
        if name.startswith(folder) and name not in listed and name[len(folder):] not in _OWN \
                and not name[len(folder):].startswith(paths.PROBE_OUTPUTS + "/"):
            g.fail(visible(f"{name}: a file no finding of {folder}{paths.HANDOFF} lists"))


__all__ = ["check_handoff", "expected_files", "packaged"]

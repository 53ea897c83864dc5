"""Fuzz evidence: the index, the record files, the reproducers and campaign.json
bound to each other, and every finding's record recomputed.

* findings.json lists exactly the record files under findings/ (one per
  signature, named after it), each with its reproducer; nothing else lies there.
* Each record file's record is re-checked like a run record (the float64
  reference recomputed, every check by its oracle's rule), and the finding is
  re-derived from the re-checked record: the judging policy must confirm it and
  give its signature, and the index entry's op, gradient, oracle, kind, form,
  oracles, size, device and scenario name must follow from the record.
* Each reproducer is the script this package writes for that record, byte for
  byte (regenerated here; scripts are never run).
* campaign.json lists the same signatures, and whether the campaign can be run
  again to the same findings is re-derived (evidence/campaigns.py).

What no offline check can show: that the campaign found nothing more. The
verdict says whether `mlx-vjpcheck replay` can (a campaign that ended
on its case budget), or that the absence of other findings is not reproducible.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from ..evidence import campaigns, paths
from ..judging import judge
from . import records
from .groups import Group


@dataclass(frozen=True)
class FuzzFacts:
    folder: str
    findings: int
    replayable: dict      # evidence/campaigns.py's rule, re-derived
    interrupted: bool


def reproducer_text(detail: dict, entry: dict, s) -> str:
    """The reproducer fuzz/findings.py writes for a finding (same arguments, same text)."""
    title = (f"{entry['op']}: {entry['gradient']} flagged by the {entry['oracle']} oracle ({entry['kind']}), "
             f"call form {entry['form']}")
    # imported here: only fuzz findings need it
    from ..cases import reproducer
    return reproducer.render(s, title=title, expected=detail["expected"],
                             description=f"mlx-vjpcheck fuzz finding {entry['signature']}.",
                             **reproducer.finding_options(entry["oracle"], entry["kind"], detail["record"]))


def _derived(s, rechecked: list, rec: dict) -> dict | None:
    """The index fields that follow from a re-checked record (None: not a finding)."""
    verdict = judge.judge(s, rechecked, rec["error"], crashed=rec["status"] == "crashed")
    if not verdict.failures or not verdict.confirmed:
        return None
    first = verdict.failures[0]
    return {"signature": judge.signature(s, first), "op": s.op, "gradient": first["gradient"],
            "oracle": first["oracle"], "kind": first["kind"], "form": s.family,
            "oracles": sorted({f["oracle"] for f in verdict.failures}),
            "size": sum(len(t.values) for t in s.operands.values()), "scenario_name": s.name,
            "device": rec["device"]}


def _entry_problems(entry: dict, detail: dict, derived: dict | None) -> list:
    if derived is None:
        return ["the re-checked record shows no confirmed finding (no failure of the float64 reference "
                "or a VJP that raised)"]
    out = [f"{k} {entry[k]!r} but the re-checked record gives {v!r}" for k, v in derived.items()
           if entry.get(k) != v]
    out += [f"the record file's {k} {detail[k]!r} is not the index's {entry[k]!r}"
            for k in ("signature", "oracle", "oracles", "size") if detail[k] != entry[k]]
    return out


def _check_one(group: Group, folder: str, entry: dict, files, rc) -> None:
    sig = entry["signature"]
    name = folder + entry["files"]["record"]
    detail = files.doc(name)
    if detail is None:
        return   # missing or not valid: reported by the file checks
    if detail["record"].get("context", "fuzz") != "fuzz":   # the native suite's records name none
        group.fail(f"{name}: the record is not a fuzz record (context {detail['record'].get('context')!r})")
        return
    try:
        group.item(_expected_problems(detail, rc), f"{name}: expected values")
    except Exception as e:   # a malformed scenario is a failed check, not a crash
        group.fail(f"{name}: scenario cannot be recomputed ({type(e).__name__}: {e})")
        return
    done = records.check_record(group, f"{name} record", detail["scenario"], detail["record"], rc, strict=False)
    if done is None:
        return
    s, rechecked = done
    group.item(_entry_problems(entry, detail, _derived(s, rechecked, detail["record"])),
               f"{folder}{paths.FINDINGS}: finding {sig}")
    script = folder + entry["files"]["reproducer"]
    if script in files:
        try:
            same = files[script] == reproducer_text(detail, entry, s).encode("utf-8")
        except Exception as e:
            same, why = False, f"cannot be regenerated ({type(e).__name__}: {e})"
        else:
            why = "is not the reproducer this package writes for the record"
        group.check(same, f"{script}: {why}")


def _expected_problems(detail: dict, rc) -> list:
    """A finding's own copy of the expected values must be the reference's."""
    _, want, _ = rc.get(detail["scenario"])
    exp = detail["expected"]
    out = [f"expected[{k!r}] differs from the recomputed float64 reference" for k, v in sorted(exp.items())
           if k not in want or not records.agree(v, want[k])]
    missing = sorted(set(want) - set(exp))
    return out + ([f"expected values missing for {missing}"] if missing else [])


def _layout_problems(folder: str, index: list, files) -> list:
    """The index, the files under findings/ and their names, one to one."""
    out, sigs = [], [e["signature"] for e in index]
    dupes = sorted({s for s in sigs if sigs.count(s) > 1})
    if dupes:
        out.append(f"signature {dupes[0]!r} is listed twice")
    want = set()
    for e in index:
        for key, path in (("record", f"{paths.FINDINGS_DIR}/{e['signature']}.json"),
                          ("reproducer", f"{paths.FINDINGS_DIR}/{e['signature']}_repro.py")):
            if e["files"][key] != path:
                out.append(f"finding {e['signature']!r}: {key} file {e['files'][key]!r} is not {path!r}")
            want.add(folder + path)
    have = {n for n in files if n.startswith(folder + paths.FINDINGS_DIR + "/")}
    out += [f"{n} is missing (listed in {folder}{paths.FINDINGS})" for n in sorted(want - have)]
    out += [f"{n} is not a file the index lists" for n in sorted(have - want)]
    return out


def _campaign_problems(folder: str, camp, index: list) -> list:
    if camp is None:
        return [f"{folder}{paths.CAMPAIGN} is missing or unreadable"]
    listed = [f["signature"] for f in camp["findings"]]
    out = []
    if sorted(listed) != sorted(e["signature"] for e in index):
        out.append(f"{folder}{paths.CAMPAIGN} lists {len(listed)} findings, {folder}{paths.FINDINGS} "
                   f"{len(index)}: not the same signatures")
    if camp["schema"] == campaigns.SCHEMA:
        out += _not_this_campaigns(folder, camp, index)
        ended = campaigns.ended_by(camp["interrupted"], camp["stats"]["cases"], camp["max_cases"]) \
            if not camp.get("shard_stats") else camp["ended_by"]
        if ended != camp["ended_by"] or camp["replayable"] != campaigns.replayable(camp):
            out.append(f"{folder}{paths.CAMPAIGN}: ended_by / replayable do not follow from the campaign's "
                       "own counts (evidence/campaigns.py)")
    return out


def _not_this_campaigns(folder: str, camp: dict, index: list) -> list:
    """Every finding was found by this campaign: one of its seeds (every shard's, every merged
    campaign's) and one of the ops it fuzzed (per_op counts every shard's and source's)."""
    out = []
    ops = set(camp["ops"]) | set((camp["stats"].get("per_op") or {}))
    for e in index:
        wrong = [f"{k} {e.get(k)!r}" for k, ok in (("seed", e.get("seed") in camp["seeds"]),
                                                   ("op", e.get("op") in ops)) if not ok]
        if wrong:
            out.append(f"{folder}{paths.FINDINGS}: finding {e['signature']!r} has {', '.join(wrong)}: not one of "
                       f"this campaign's (seeds {camp['seeds']}, ops {sorted(ops)})")
    return out


def check_findings(group: Group, folder: str, files, rc) -> FuzzFacts:
    """Every check of one findings.json (schema-checked, as are its record files)."""
    index = files.doc(folder + paths.FINDINGS)
    camp = files.doc(folder + paths.CAMPAIGN)
    group.item(_layout_problems(folder, index, files), f"{folder}{paths.FINDINGS}: files")
    group.item(_campaign_problems(folder, camp, index), f"{folder}{paths.FINDINGS}: campaign")
    for entry in index:
        _check_one(group, folder, entry, files, rc)
    python = isinstance(camp, dict) and camp.get("schema") == campaigns.SCHEMA
    replay = campaigns.replayable(camp) if python else {
        "by_seed": False, "why": "not a campaign of `mlx-vjpcheck fuzz`"}
    return FuzzFacts(folder, len(index), replay, bool(isinstance(camp, dict) and camp.get("interrupted")))


def is_record_file(name: str) -> bool:
    """findings/<signature>.json beside a findings.json."""
    parent = paths.folder(name)
    return name.endswith(".json") and PurePosixPath(parent).name == paths.FINDINGS_DIR

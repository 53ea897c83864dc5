"""Replay evidence: run every recorded scenario again in the installed MLX (in the
crash-isolated workers) and say, per record, whether it reproduced.

A record reproduces when its status is the same and every check it recorded
has the same pass/fail status again; where a recorded reference check passed
(MLX agreed with the reference), the new observed values must also agree with
the recorded ones under the recorded tolerance. Failing values are compared by
status only: where MLX reads past a buffer, its garbage differs from run to run.

Run evidence (results.json) replays through the runner's worker; fuzz findings
through the fuzz worker, so every oracle of the finding runs again. Native
evidence ran MLX's C++ translation units built from a checkout: it is not
replayed here, and the report says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core import checks, jsonio
from ..core.scenario import Scenario
from ..evidence import paths


@dataclass
class Item:
    """One recorded record to replay."""
    source: str           # the evidence file it came from
    scenario: Scenario
    device: str
    recorded: dict        # the recorded record
    kind: str             # "run" or "fuzz"


@dataclass
class Outcome:
    item: Item
    replayed: dict | None
    problems: list = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.replayed is not None and not self.problems




def collect(files: dict) -> tuple:
    """(items to replay, lines about what cannot be replayed, recorded MLX versions)."""
    items, unreplayable, versions = [], [], set()
    for name in sorted(files):
        base = paths.basename(name)
        data = strict.member(files, name) if name.endswith(".json") else None
        if paths.is_results(name) and isinstance(data, dict) and base != paths.RESULTS:
            unreplayable.append(f"{name}: native evidence (MLX's translation units built from a checkout, "
                                "pristine or patched) cannot be replayed on an installed MLX; rerun "
                                "build_and_test.py on that checkout")
            continue
        if base == paths.RESULTS and isinstance(data, dict):
            items += _run_items(name, data)
            versions.add(str((data.get("environment") or {}).get("mlx")))
        elif paths.folder(name).endswith(paths.FINDINGS_DIR + "/") and isinstance(data, dict) \
                and isinstance(data.get("record"), dict):
            items.append(_finding_item(name, data))
    for name in sorted(n for n in files if paths.basename(n) == paths.ENVIRONMENT):
        env = strict.member(files, name)
        if isinstance(env, dict) and paths.folder(name) + paths.FINDINGS in files:
            versions.add(str(env.get("mlx")))
    return items, unreplayable, versions


def _run_items(name, data) -> list:
    scen = data.get("scenarios") or {}
    return [Item(name, Scenario.from_dict(scen[r["scenario"]]), r["device"], r, "run")
            for r in data.get("records") or [] if isinstance(r, dict) and r.get("scenario") in scen]


def _finding_item(name, data) -> Item:
    rec = data["record"]
    return Item(name, Scenario.from_dict(data["scenario"]), rec.get("device", "cpu"), rec, "fuzz")


def compare(recorded: dict, replayed: dict) -> list:
    """Why a replayed record does not reproduce the recorded one (empty: it does)."""
    out = []
    if recorded.get("status") != replayed.get("status"):
        out.append(f"status {recorded.get('status')} -> {replayed.get('status')}"
                   + (f" ({replayed.get('error')})" if replayed.get("error") else ""))
    new = {c["name"]: c for c in replayed.get("checks") or []}
    for c in recorded.get("checks") or []:
        again = new.get(c.get("name"))
        if again is None:
            if replayed.get("status") not in ("error", "crashed"):
                out.append(f"{c.get('name')}: not checked again")
            continue
        if bool(c.get("passed")) != bool(again.get("passed")):
            out.append(f"{c.get('name')}: {'pass' if c.get('passed') else 'fail'} -> "
                       f"{'pass' if again.get('passed') else 'fail'}")
        elif c.get("passed") and c.get("kind", "reference") == "reference":
            same = checks.compare(c["name"], again.get("observed"), c.get("observed"), c.get("atol", 0.0),
                                  c.get("rtol", 0.0))
            if not same["passed"]:
                out.append(f"{c.get('name')}: passes again, but its values moved beyond the recorded "
                           f"tolerance ({same['reason']})")
    return out


def _run_group(items: list, device: str, on_record) -> list:
    from . import runner
    records = runner.run_device([it.scenario for it in items], device, on_record)
    by_name = {r["scenario"]: r for r in records}
    return [by_name.get(it.scenario.name) for it in items]


def replay(items: list, available: list, on_record=lambda rec: None, fuzz_records=None) -> list:
    """An Outcome per item, in order; records on a device this MLX lacks are not run.
    `fuzz_records(scenarios, device, on_record) -> [record]` replays fuzz findings
    (fuzz/campaign.py's replay_records: every oracle, in its crash-isolated worker)."""
    outcomes = {}
    groups = {}
    for k, it in enumerate(items):
        groups.setdefault((it.kind, it.device), []).append((k, it))
    for (kind, device), members in groups.items():
        if device not in available:
            for k, it in members:
                outcomes[k] = Outcome(it, None, [f"cannot replay on {device}: not available in this MLX"])
            continue
        if kind == "run":
            replayed = _run_group([it for _, it in members], device, on_record)
        else:
            replayed = fuzz_records([it.scenario for _, it in members], device, on_record)
        for (k, it), rec in zip(members, replayed):
            outcomes[k] = Outcome(it, rec, compare(it.recorded, rec) if rec else ["no record came back"])
    return [outcomes[k] for k in range(len(items))]

"""Findings: one per defect signature, with the minimal counterexample, its
results-schema record, and the files written for it.

Out dir layout (written whole via evidence.rundir.staged, with MANIFEST.sha256):
  findings.json                 list of findings (signature, op, gradient, oracle, kind, ...)
  findings/<signature>.json     {"scenario", "record", "oracle", "expected", ...}
  findings/<signature>_repro.py standalone reproducer (mlx + numpy + stdlib; exit 0/1/125),
                                under the transform of the finding's oracle where it has one
  campaign.json                 seed, budget, case counts, unconfirmed samples
  environment.json
"""
from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..cases import bind, expected, reproducer
from ..cases.files import FINDING_SCHEMA as SCHEMA
from ..core import jsonio
from ..core.scenario import Scenario
from ..evidence import atomic, paths


def size(s) -> int:
    """Total operand elements, storage and index arrays included (what a
    counterexample costs to read)."""
    return sum(len(t.values) for t in s.operands.values())


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Finding:
    signature: str
    op: str
    gradient: str
    oracle: str
    kind: str
    form: str
    oracles: list            # every oracle that flagged the minimal case
    seed: int
    round: int
    time_found_s: float      # first (unshrunk) hit, seconds from campaign start
    time_minimal_s: float    # minimal counterexample recorded
    cases_before: int
    shrunk: bool
    size: int
    first_size: int
    found_at: str
    device: str
    scenario: dict = field(repr=False)
    record: dict = field(repr=False)
    shard: int | None = None
    from_database: bool = False  # first seen replaying a case an earlier campaign kept
    # The float64 values it was judged against, and the bound scenario: carried
    # from the outcome, so nothing is rebuilt or recomputed when it is written.
    expected: dict | None = field(default=None, repr=False)
    bound: object = field(default=None, repr=False, compare=False)

    @staticmethod
    def from_outcome(out, **kw) -> "Finding":
        p = out.primary
        return Finding(
            signature=out.signature, op=out.scenario.op, gradient=p["gradient"], oracle=p["oracle"],
            kind=p["kind"], form=out.scenario.family,
            oracles=sorted({f["oracle"] for f in out.failures}), size=size(out.scenario),
            found_at=_now(), scenario=out.scenario.to_dict(), record=out.record,
            expected=out.expected, bound=out.scenario, **kw)

    def scenario_obj(self):
        if self.bound is None:
            self.bound = bind(Scenario.from_dict(self.scenario))
        return self.bound

    def expected_values(self) -> dict:
        if self.expected is None:   # a process that died never sent its expected values
            self.expected = {k: np.asarray(v).tolist() for k, v in expected.expected(self.scenario_obj()).items()}
        return self.expected

    def entry(self) -> dict:
        """The findings.json line: everything but the bulky scenario and record."""
        d = {k: v for k, v in asdict(self).items() if k not in ("scenario", "record", "expected", "bound")}
        d["scenario_name"] = self.scenario["name"]
        d["files"] = {"record": f"{paths.FINDINGS_DIR}/{self.signature}.json",
                      "reproducer": f"{paths.FINDINGS_DIR}/{self.signature}_repro.py"}
        return d

    def detail(self) -> dict:
        return {"schema": SCHEMA, "signature": self.signature, "oracle": self.oracle,
                "oracles": self.oracles, "scenario": self.scenario, "record": self.record,
                "expected": self.expected_values(), "size": self.size}

    def reproducer(self) -> str:
        """Rendered from the finding as its file holds it (keys sorted, values read back), so
        that the validator, which has only the file, writes the same script byte for byte."""
        written = jsonio.loads(jsonio.dumps(self.detail(), sort_keys=True))
        title = f"{self.op}: {self.gradient} flagged by the {self.oracle} oracle ({self.kind}), call form {self.form}"
        return reproducer.render(bind(Scenario.from_dict(written["scenario"])), title=title,
                                 expected=written["expected"], description=f"mlx-vjpcheck fuzz finding {self.signature}.",
                                 **reproducer.finding_options(self.oracle, self.kind, written["record"]))


def write_one(root, f: Finding) -> None:
    """A finding's record and reproducer, written as soon as it is found."""
    root = Path(root)
    atomic.write_json(root / paths.FINDINGS_DIR / f"{f.signature}.json", f.detail())
    atomic.write_text(root / paths.FINDINGS_DIR / f"{f.signature}_repro.py", f.reproducer())


def write(root, found: list, campaign: dict, env: dict) -> None:
    root = Path(root)
    for f in found:
        write_one(root, f)
    atomic.write_json(root / paths.FINDINGS, [f.entry() for f in found])
    atomic.write_json(root / paths.CAMPAIGN, campaign)
    atomic.write_json(root / paths.ENVIRONMENT, env)


def load(root) -> list:
    """Findings of an out dir, with scenario and record restored from their files."""
    root = Path(root)
    out = []
    for e in jsonio.loads((root / paths.FINDINGS).read_text(encoding="utf-8")):
        detail = jsonio.loads((root / e["files"]["record"]).read_text(encoding="utf-8"))
        kw = {k: v for k, v in e.items() if k not in ("scenario_name", "files")}
        out.append(Finding(scenario=detail["scenario"], record=detail["record"],
                           expected=detail.get("expected"), **kw))
    return out


def merge(groups: list) -> list:
    """Deduplicate findings of several shards by signature: keep the smallest
    counterexample (ties: the earliest minimal), ordered by time found."""
    best = {}
    for f in (f for group in groups for f in group):
        cur = best.get(f.signature)
        if cur is None or (f.size, f.time_minimal_s) < (cur.size, cur.time_minimal_s):
            best[f.signature] = f
    return sorted(best.values(), key=lambda f: (f.time_found_s, f.signature))


def load_campaign(root) -> dict:
    return jsonio.loads((Path(root) / paths.CAMPAIGN).read_text(encoding="utf-8"))

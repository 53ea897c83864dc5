"""Scenarios from files: findings are scenarios too (numpy only, no mlx).

`load(path)` reads what `--scenarios FILE|DIR` names:

* a catalog file, as `mlx-vjpcheck catalog` writes it ({"schema": scenario/3,
  "scenarios": [...]});
* one finding, as the fuzzer writes `findings/<signature>.json`
  ({"schema": fuzz-finding/3, "scenario": {...}, "record": {...}});
* one regression-corpus entry (`harness/regressions/<signature>.json`,
  schema regression/2, below);
* a directory of any of these: its `*.json` files, and those of its
  `findings/` folder when it has one (so a fuzz output directory works as it
  is). The fuzz run directory's own index files (findings.json, campaign.json,
  environment.json) are passed over; any other JSON file that is none of the
  above is an error.

Files are strict JSON (no NaN or Infinity). Every problem raises
`ScenarioFileError` with one line naming the file; nothing is half-loaded.

Each scenario comes back as an `Entry` that also says what is expected of it
on a pristine build: a catalog scenario expects a defect when its tags say so
(`Scenario.expects_defect`), a finding is a defect seen on the wheel that
found it, and a corpus entry records its status on pristine MLX and whether
the proposed patch is meant to fix it (and if not, why).

The regression corpus (`regressions()`) is package data: one minimal
scenario per confirmed finding signature, in harness/regressions/.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..core import jsonio
from ..core import scenario as scenario_mod
from ..core.scenario import Scenario, SchemaError, refuse_old
from . import UnboundOp, bind

CATALOG_SCHEMA = scenario_mod.SCHEMA
# /3 (and regression/2): the op-agnostic call record of core/scenario.py.
FINDING_SCHEMA = "mlx-vjpcheck/fuzz-finding/3"
REGRESSION_SCHEMA = "mlx-vjpcheck/regression/2"
# What older releases wrote: refused with one line naming the version.
OLD_SCHEMAS = {**{v: ("scenario catalog", CATALOG_SCHEMA) for v in scenario_mod.OLD_SCHEMAS},
               **{f"mlx-vjpcheck/fuzz-finding/{n}": ("fuzz finding", FINDING_SCHEMA) for n in (1, 2)},
               "mlx-vjpcheck/regression/1": ("regression entry", REGRESSION_SCHEMA)}
CORPUS_DIR = Path(__file__).resolve().parents[1] / "regressions"
# Index files of a fuzz output directory that hold no scenario of their own.
RUN_DIR_FILES = ("findings.json", "campaign.json", "environment.json")
STATUSES = ("pass", "fail", "error", "crashed")
MAX_BYTES = 64 << 20


class ScenarioFileError(ValueError):
    """A scenario file or directory cannot be used (one line, exit 2)."""


@dataclass(frozen=True)
class Entry:
    scenario: Scenario
    source: str                      # the file it came from
    kind: str                        # "catalog", "finding" or "regression"
    expects_defect: bool             # a pristine build is expected not to pass it
    in_scope: bool = True            # the proposed patch is meant to make it pass
    reason: str = ""                 # why not, when out of scope
    meta: dict = field(default_factory=dict, compare=False)   # the corpus entry's other fields


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def read_json(path: Path):
    """Strict JSON from a file, or ScenarioFileError naming it."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ScenarioFileError(f"{path}: larger than {MAX_BYTES >> 20} MiB")
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioFileError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioFileError(f"{path}: not UTF-8 text") from None
    try:
        return jsonio.loads(text)   # strict, non-finite numbers as {"nonfinite": ...}
    except ValueError as e:
        raise ScenarioFileError(f"{path}: not strict JSON ({e})") from None


def _scenario(d, where: str) -> Scenario:
    """A bound scenario from its dict, or ScenarioFileError naming the file."""
    if not isinstance(d, dict):
        raise ScenarioFileError(f"{where}: a scenario must be a JSON object")
    try:
        s = Scenario.from_dict(d)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise ScenarioFileError(f"{where}: not a scenario ({what})") from None
    if not isinstance(s.name, str) or not s.name:
        raise ScenarioFileError(f"{where}: a scenario needs a non-empty name")
    for name, t in list(s.operands.items()) + [("cotangent", s.cotangent)]:
        if t is None:
            continue
        n = math.prod(t.shape) if all(isinstance(x, int) and x >= 0 for x in t.shape) else -1
        if n != len(t.values):
            raise ScenarioFileError(f"{where}: scenario {s.name!r}: {name} has {len(t.values)} values "
                                    f"for shape {list(t.shape)}")
    try:
        return bind(s)
    except UnboundOp as e:
        raise ScenarioFileError(f"{where}: {e}") from None


def _regression(d: dict, where: str) -> Entry:
    s = _scenario(d.get("scenario"), where)
    pristine = d.get("pristine")
    if not isinstance(pristine, dict) or pristine.get("status") not in STATUSES:
        raise ScenarioFileError(f"{where}: 'pristine' must record a status ({', '.join(STATUSES)})")
    in_scope = d.get("in_scope")
    if not isinstance(in_scope, bool):
        raise ScenarioFileError(f"{where}: 'in_scope' must be true or false")
    reason = d.get("out_of_scope_reason", "")
    if not in_scope and not (isinstance(reason, str) and reason.strip()):
        raise ScenarioFileError(f"{where}: an out-of-scope entry needs an 'out_of_scope_reason'")
    meta = {k: v for k, v in d.items() if k != "scenario"}
    return Entry(s, where, "regression", pristine["status"] != "pass", in_scope,
                 reason if not in_scope else "", meta)


def entries_of(obj, where: str) -> list:
    """The entries one parsed JSON document holds (ScenarioFileError if none)."""
    schema = obj.get("schema") if isinstance(obj, dict) else None
    if schema in OLD_SCHEMAS:
        try:
            refuse_old(schema, *OLD_SCHEMAS[schema])
        except SchemaError as e:
            raise ScenarioFileError(f"{where}: {e}") from None
    if schema == CATALOG_SCHEMA:
        items = obj.get("scenarios")
        if not isinstance(items, list):
            raise ScenarioFileError(f"{where}: a catalog needs a list of scenarios")
        out = []
        for n, d in enumerate(items):
            s = _scenario(d, f"{where} scenario {n}")
            out.append(Entry(s, where, "catalog", s.expects_defect))
        return out
    if schema == REGRESSION_SCHEMA:
        return [_regression(obj, where)]
    if schema == FINDING_SCHEMA:
        s = _scenario(obj.get("scenario"), where)
        return [Entry(s, where, "finding", True, meta={"signature": obj.get("signature")})]
    raise ScenarioFileError(f"{where}: neither a scenario catalog, a fuzz finding nor a regression "
                            f"entry (schema {schema!r})")


def _files_of_dir(root: Path) -> list:
    found = []
    for folder in (root, root / "findings"):
        if folder.is_dir():
            found += sorted(p for p in folder.glob("*.json") if p.is_file()
                            and not (folder == root and p.name in RUN_DIR_FILES))
    return found


def load_entries(path) -> list:
    """Every entry of FILE or DIR; names must be unique."""
    path = Path(path)
    if path.is_dir():
        files = _files_of_dir(path)
        if not files:
            raise ScenarioFileError(f"{path}: no scenario files (*.json) in this directory "
                                    "or its findings/ folder")
    elif path.is_file():
        files = [path]
    else:
        raise ScenarioFileError(f"{path}: no such file or directory")
    out = []
    for f in files:
        out += entries_of(read_json(f), str(f))
    return unique(out)


def unique(entries: list) -> list:
    seen = {}
    for e in entries:
        if e.scenario.name in seen:
            raise ScenarioFileError(f"scenario name {e.scenario.name!r} appears twice "
                                    f"({seen[e.scenario.name]} and {e.source})")
        seen[e.scenario.name] = e.source
    return entries


def load(path) -> list:
    """The scenarios of FILE or DIR."""
    return [e.scenario for e in load_entries(path)]


# --- the regression corpus -------------------------------------------------------

def regressions(root=None) -> list:
    """The committed corpus, as entries, ordered by file name."""
    root = Path(root) if root is not None else CORPUS_DIR
    if not root.is_dir():
        return []
    out = []
    for f in sorted(root.glob("*.json")):
        obj = read_json(f)
        if not (isinstance(obj, dict) and obj.get("schema") in (REGRESSION_SCHEMA, *OLD_SCHEMAS)):
            raise ScenarioFileError(f"{f}: not a regression entry")
        out += entries_of(obj, str(f))
    return unique(out)


def catalog_entries(scenarios) -> list:
    return [Entry(s, "catalog", "catalog", s.expects_defect) for s in scenarios]

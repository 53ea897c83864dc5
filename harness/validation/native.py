"""Native evidence: every recorded command has an exit code and its logs; the
pristine-vs-patched table is re-derived, not read.

Each row's statuses come from the two results files, and what the row says
about its scenario comes from this package, never from the row:

* a catalog scenario (its name is one, and it must be that scenario byte for
  byte): expects a defect when its tags say so, always in scope;
* a regression-corpus entry this package ships (harness/regressions/, matched
  by scenario name, and equal to it): its signature, its recorded pristine
  status, whether the patch is meant to fix it and why not;
* anything else came from a scenario file given to the gate: a finding expects
  a defect and is in scope; a corpus-format file's scope is that file's own
  word, which no offline check can verify: such rows are counted as
  "self-declared", and `--expect gate-pass` refuses them unless allowed.

The gate verdict is then this module's own rule over the re-derived rows (the
scope: the ops whose scenarios change, all of gather_mm / gather_qmm when one
does, or the recorded --fixes), and MLX's own tests are re-judged from their
recorded outcomes. A gate that ran less than the whole catalog and corpus is
"unbound", as a results file is (binding.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..cases import bind, files as case_files
from ..core.scenario import Scenario
from ..evidence import paths
from ..evidence.safezip import unsafe_path
from ..judging import gate_verdict as rules
from ..oracles import FIRST_ORDER
from . import catalog_table

VARIANTS = ("pristine", "patched")
MLX_TESTS = "mlx-tests.json"
GATE = "gate.json"


@dataclass
class GateFacts:
    folder: str
    rows: list = field(default_factory=list)      # re-derived rows
    self_declared: int = 0                        # rows whose scope only a scenario file states
    bound: bool = False
    scope_text: str = ""
    ok: bool = False
    line: str = ""
    fails: dict = field(default_factory=dict)     # {scenario: {variant: oracles its record fails}}
    tags: dict = field(default_factory=dict)      # {scenario: first-order classes that bite}
    changed: dict = field(default_factory=dict)   # value_changes of the two results files
    partly: dict = field(default_factory=dict)    # partly_fixed of the two results files


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# --- commands --------------------------------------------------------------------------------------

def _command_problems(c: dict, folder: str, listed: set, ids: set) -> list:
    out = []
    if c["id"] in ids:
        out.append(f"id {c['id']!r} repeated")
    for stream in ("stdout", "stderr"):
        rel = c[stream]
        why = unsafe_path(rel)
        if why:
            out.append(f"{stream}: {why}")
        elif folder + rel not in listed:
            out.append(f"{stream} log {folder + rel} is not in the manifest")
    return out


def check_commands(group, folder: str, data: list, listed: set) -> None:
    """listed: the manifest's paths that exist with a verified hash."""
    ids = set()
    for n, c in enumerate(data):
        group.item(_command_problems(c, folder, listed, ids), f"{folder}{paths.COMMANDS}: command {c['id']!r}")
        ids.add(c["id"])


# --- what each row says, re-derived ---------------------------------------------------------------

_CORPUS: list = []


def corpus() -> dict:
    """This package's regression corpus by scenario name: (canonical hash, entry)."""
    if not _CORPUS:
        _CORPUS.append({e.scenario.name: (catalog_table.text_hash(catalog_table.canonical(e.scenario.to_dict())), e)
                        for e in case_files.regressions()})
    return _CORPUS[0]


def _origin(name: str, scen: dict | None, table, oracles=None) -> tuple:
    """(source, fields the row must carry | None when only a file says them, problem);
    `oracles`: the oracles the builds' executor runs (None: every one)."""
    if scen is None:
        return None, None, "no scenario recorded for it"
    h = catalog_table.text_hash(catalog_table.canonical(scen))
    if name in table.hashes:
        s = bind(Scenario.from_dict(scen))
        same = table.hashes[name] == h
        return "catalog", {"expects_defect": rules.expects_defect("catalog", s.expects_defect, s, oracles),
                           "in_scope": True}, \
            None if same else "differs from the catalog scenario of that name"
    known = corpus().get(name)
    if known is not None:
        e = known[1]
        want = {"expects_defect": rules.expects_defect("regression", e.expects_defect, e.scenario, oracles),
                "in_scope": e.in_scope, "source": "regression",
                "signature": e.meta.get("signature"), "recorded_pristine": e.meta["pristine"]["status"]}
        if not e.in_scope:
            want["reason"] = e.reason
        return "regression", want, None if known[0] == h else "differs from the corpus entry of that name"
    return "file", None, None


def executor_oracles(doc: dict):
    """The oracles a gate build's results ran: the native C++ suite checks first order only
    (a class only a transform oracle shows is not expected of it); anything else, all."""
    kind = str(doc.get("kind") or "")
    return FIRST_ORDER if kind == "native" or kind.startswith("native-") else None


def _file_row(row: dict, scen: dict, oracles=None) -> tuple:
    """A row from a scenario file given to the gate: (problems, fields, self-declared?)."""
    s = bind(Scenario.from_dict(scen))
    source = row.get("source")
    if source == "finding":
        want = {"expects_defect": True, "in_scope": True}
    elif source == "catalog":
        want = {"expects_defect": rules.expects_defect("catalog", s.expects_defect, s, oracles),
                "in_scope": True}
    else:   # a corpus-format file's own word: recorded, not re-derivable
        return [], {"expects_defect": bool(row.get("expects_defect")), "in_scope": row.get("in_scope", True)}, True
    return _disagree(row, want, f"a {source} from a scenario file"), want, False


def _disagree(row: dict, want: dict, what: str) -> list:
    """A field the row states that is not the re-derived one (fields it leaves out are taken)."""
    return [f"{k} {row[k]!r} but {what} gives {v!r}" for k, v in want.items() if k in row and row[k] != v]


def _row(row: dict, scen: dict | None, pristine: dict, patched: dict, table, oracles=None) -> tuple:
    """(problems, the row as re-derived, self-declared?) for one recorded row: statuses
    from the results files, everything else from this package (or the scenario file)."""
    key, out = (row["scenario"], row["device"]), []
    for side, tab in (("pristine", pristine), ("patched", patched)):
        if row[side] != tab.get(key):
            out.append(f"{side} {row[side]!r} but results-{side}.json says {tab.get(key)!r}")
    derived = {"scenario": key[0], "device": key[1], "pristine": pristine.get(key), "patched": patched.get(key),
               "op": (scen or {}).get("op")}
    source, want, problem = _origin(row["scenario"], scen, table, oracles)
    if problem:
        return out + [problem], dict(derived, in_scope=False), False
    if scen is not None and row.get("op", scen["op"]) != scen["op"]:
        out.append(f"op {row.get('op')!r} is not the scenario's {scen['op']!r}")
    if want is None:
        more, fields, declared = _file_row(row, scen, oracles)
        return out + more, dict(derived, **fields), declared
    if row.get("source", source) != source:
        out.append(f"source {row.get('source')!r} but the scenario is a {source} scenario")
    out += _disagree(row, {k: v for k, v in want.items() if k != "source"}, f"this package's {source}")
    return out, dict(derived, **want), False


def _statuses(data: dict) -> dict:
    return {(r["scenario"], r["device"]): r["status"] for r in data["records"]}


def _scenarios(files, folder: str) -> dict:
    """Scenario dicts by name: the results files' and the gate's scenarios.json."""
    out = {}
    for base in ("", folder):
        doc = files.doc(base + paths.SCENARIOS)
        if isinstance(doc, dict):
            out.update({d["name"]: d for d in doc["scenarios"]})
    for v in VARIANTS:
        data = files.doc(folder + paths.results_for(v))
        if isinstance(data, dict):
            out.update(data["scenarios"])
    return out


def check_comparison(group, folder: str, data: dict, files, table) -> GateFacts:
    where = f"{folder}{paths.COMPARISON}"
    facts = GateFacts(folder)
    docs = [files.doc(folder + paths.results_for(v)) for v in VARIANTS]
    if not all(isinstance(d, dict) for d in docs):
        group.fail(f"{where}: results-pristine.json or results-patched.json missing or unreadable")
        return facts
    pristine, patched = _statuses(docs[0]), _statuses(docs[1])
    scen = _scenarios(files, folder)
    by_variant = {v: d["records"] for v, d in zip(VARIANTS, docs)}
    facts.fails = rules.failing_by_scenario(by_variant)
    # re-derived from the records, as the gate derives them: what the diff changed or mended
    facts.changed, facts.partly = rules.value_changes(by_variant), rules.partly_fixed(by_variant)
    keys = []
    for row in data["rows"]:
        key = (row["scenario"], row["device"])
        keys.append(key)
        try:
            problems, derived, declared = _row(row, scen.get(row["scenario"]), pristine, patched, table,
                                               executor_oracles(docs[0]))
        except Exception as e:   # a scenario that cannot be read is a failed row, not a crash
            problems, derived, declared = [f"scenario cannot be read ({type(e).__name__}: {e})"], None, False
        group.item(problems, f"{where}: {key}")
        facts.self_declared += declared
        if derived is not None:
            facts.rows.append(derived)
            tags = _biting(scen.get(row["scenario"])) if derived.get("expects_defect") else []
            if tags:
                facts.tags[row["scenario"]] = tags
    group.check(len(keys) == len(set(keys)) and set(keys) == set(pristine) | set(patched),
                f"{where}: rows do not cover each (scenario, device) of the two results files exactly once")
    facts.bound = _selection_bound(scen, table)
    return facts


def _biting(scen: dict | None) -> list:
    """The defect classes the first-order checks show on this call (this package's record
    of the op decides; a scenario of an op it does not know: its tags as given)."""
    if scen is None:
        return []
    try:
        s = bind(Scenario.from_dict(scen))
    except Exception:   # an unknown op: the file's own word
        return list(scen.get("defect_tags") or [])
    return rules.biting(s, FIRST_ORDER)


def _selection_bound(scen: dict, table) -> bool:
    """The gate ran the whole catalog and the whole shipped corpus."""
    return set(table.names) <= set(scen) and set(corpus()) <= set(scen)


# --- MLX's own tests -------------------------------------------------------------------------------

change = rules.mlx_change   # one test's outcomes on the two builds




def check_mlx_tests(group, name: str, doc: dict, reruns: dict | None = None) -> tuple:
    """Each row's change re-derived from its outcomes; (ok, line) of the tests' verdict. A
    pass -> fail that the gate's recorded reruns show passing again on patched is flaky, not
    the patch's (the rule of judging/gate_verdict.py, re-derived from those outcomes: recorded
    facts like the rows themselves, which only a replay re-executes)."""
    for r in doc["rows"]:
        want = change(r["pristine"], r["patched"])
        group.check(r["change"] == want, f"{name}: {r['suite']} {r['test']}: change {r['change']!r} "
                                         f"but the outcomes give {want!r}")
    derived = [dict(r, change=change(r["pristine"], r["patched"])) for r in doc["rows"]]
    flaky = [r for r in derived if rules.mlx_flaky(r, reruns)]
    bad = rules.mlx_regressions(derived, reruns)
    # the patch's own regression tests: each file fails pristine and passes patched (the rule
    # of judging/gate_verdict.py, re-derived from the outcomes)
    handoff = rules.handoff_problems(doc["rows"])
    for why in handoff:
        group.fail(f"{name}: {why}")
    return not bad and not handoff, (f"MLX tests: {len(doc['rows'])} rows, {len(bad)} regressions"
                                     + (f" (first: {bad[0]['suite']} {bad[0]['test']})" if bad else "")
                                     + (f", {len(flaky)} flaky by the gate's recorded reruns (first: "
                                        f"{flaky[0]['suite']} {flaky[0]['test']})" if flaky else "")
                                     + (f"; {handoff[0]}" if handoff else ""))


# --- the gate verdict over re-derived rows ---------------------------------------------------------

def gate_verdict(facts: GateFacts, fixes, what: str, claims=None, inferred_ops=None, sweep=None) -> None:
    """Fill facts.ok / facts.line with the gate's own rules (judging/gate_verdict.py) over the
    re-derived rows: every expected defect of a strict op reproduced on pristine, every
    scenario the patch is held to (its fixed first-order classes, and the classes inferred
    from the functions the diff changes, inferred_claims over the re-derived rows) passing
    patched in the gradient rules' own oracles ("changed, not fixed" included), nothing
    regressed, no sweep reproducer regressed (`sweep`: gate.json's rows, re-judged). Reruns
    the gate recorded are not taken: offline every regression stands. The recorded
    inferred ops are taken as they are: they can only add held classes, never narrow the
    scope."""
    comp = {"rows": facts.rows}
    inferred = rules.inferred_claims(inferred_ops or {}, [comp], facts.partly, facts.tags)
    scope = rules.resolve_scope(fixes if fixes in ("none", None) or isinstance(fixes, list) else None,
                                [comp], claims=claims, inferred=inferred)
    j = rules.judge(comp, scope, facts.fails, None, facts.tags, changed=facts.changed)
    n_exp, missed, unfixed, reg = len(j["expected"]), j["missed"], j["unfixed"], j["regressed"]
    words = (", ".join(scope["ops"]) or "no op") + f" ({scope['how']})"
    facts.scope_text = words
    sweep_ok, sweep_line = rules.sweep_verdict(sweep) if sweep is not None else (True, "")
    facts.ok = (bool(scope["ops"]) and bool(j["expected"]) and not missed and not unfixed and not reg
                and not j.get("changed_not_fixed") and sweep_ok)
    facts.line = (f"{what}: scope {words}; pristine reproduced {n_exp - len(missed) - len(j['absent'])}/{n_exp} "
                  f"expected defects, patched passes {len(j['scoped']) - len(unfixed)}/{len(j['scoped'])} "
                  f"scenarios it is held to, {len(reg)} regressed"
                  + (f", {len(j['changed_not_fixed'])} changed, not fixed" if j.get("changed_not_fixed") else "")
                  + (f"; {sweep_line}" if sweep_line else ""))

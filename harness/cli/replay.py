"""`mlx-vjpcheck replay EVIDENCE`: does this machine reproduce the evidence?

The second trust level, "reproduced". The evidence (directory or bundle) must
validate first; then what runs again follows from its layout, the files the one
command that wrote it writes (validation/replayplan.py): every record of it is
executed again, or the evidence is refused with the reason (a file that command
does not write, a results kind nothing here executes, a handoff):

* run results: every record through the installed MLX (running/replay.py:
  deterministic values compared within each check's tolerance, values MLX
  cannot repeat treated as such);
* fuzz findings: each finding's record through every fuzz oracle again; a
  campaign that ended on its case budget is run again from its seeds and must
  find the same signatures (otherwise the verdict says that part is not
  reproducible; with --campaign it fails);
* a version matrix: the recorded probes (only those this package ships, found
  by their hash: a script from evidence is never run) in the recorded releases
  (all, or --only), each cell's exit code compared;
* the C++ suite against the wheel (`mlx-vjpcheck native`): rebuilt and run again;
* a native gate (build_and_test.py): rebuilt from its recorded commit and patch
  (needs --mlx-source and --mlx-build: build_and_test.py --replay does the work);
* a sweep (sweep.json): every record run again in the sweep's crash-isolated
  worker, each record's status and signatures compared (sweep/replay.py); with
  --sample N only N clean passes drawn at random are, and the sweep is then not
  reproduced as a whole (the output says how many were left out);
* a gradcheck (gradcheck.json): the recorded MODULE:FUNCTION and inputs factory
  imported again from the recorded import root (the directory `gradcheck --out`
  ran in) by `mlx-vjpcheck gradcheck` in a process of its own, every check's
  verdict compared; refused, with the reason, when they do not import there.

Evidence recorded elsewhere (any provenance field evidence/provenance.py
compares: MLX version or checkout, packages, Python, numpy, compiler, system, CPU
architecture, harness version and commit; or a device this MLX lacks) is "not
reproduced here" (exit 1), the field named, unless --allow-drift. Exit 0 everything reproduced, 1 otherwise,
2 bad input (evidence that does not validate, no MLX), 130 interrupted.
"""
from __future__ import annotations

import argparse
import platform
import sys

from ..core.errors import UsageError
from ..evidence import paths, provenance
from ..evidence.load import BadInput, load
from ..evidence.text import visible
from ..running import replay as R
from ..validation import evidence, replayplan
from . import options

def add_parser(sub, name):
    p = sub.add_parser(name, help="execute the evidence again and say whether it reproduced")
    p.add_argument("evidence", metavar="EVIDENCE", help="run directory or bundle .zip (it must validate)")
    p.add_argument("--allow-drift", action="store_true",
                   help="replay although the evidence was recorded on another MLX version, platform or device "
                        "(the verdict then says so)")
    p.add_argument("--campaign", action="store_true",
                   help="fuzz evidence: require the campaign to be run again from its seeds (a campaign that "
                        "ended on its case budget, --max-examples, always is; any other then fails)")
    p.add_argument("--only", metavar="V", nargs="+", help="version matrix: replay only these releases")
    p.add_argument("--cache-dir", metavar="DIR", help="version matrix: where release environments are kept")
    p.add_argument("--timeout", type=options.positive_float, default=300, help="version matrix: seconds per probe")
    p.add_argument("--jobs", "-j", type=options.positive_int, default=None,
                   help="records (or releases) handled at once (default: one per CPU, at most 4)")
    p.add_argument("--sample", type=_count, default=None, metavar="N",
                   help="sweep: run only this many of its clean passes again, drawn at random (default: "
                        "all); every other record always runs again, and a sweep not run again whole is not "
                        "reproduced")
    p.add_argument("--mlx-source", metavar="DIR", help="native gate: the MLX checkout at the recorded commit")
    p.add_argument("--mlx-build", metavar="DIR", help="native gate: its static build")
    p.add_argument("--cache", metavar="DIR", help="native gate: the build cache (build_and_test.py --cache)")
    p.add_argument("--out", metavar="DIR", default="artifacts/native-replay",
                   help="native gate: where the rebuilt run goes (default: artifacts/native-replay)")
    options.add_replace(p)
    p.set_defaults(func=main)


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a count (0 or more), got {text!r}")
    return n


def _validated(path):
    try:
        ev = load(path)
        groups, facts = evidence.validate_all(ev)
    except BadInput as e:
        raise UsageError(str(e)) from None
    lines, passed = evidence.report(groups)
    if not passed:
        print("\n".join(visible(line) for line in lines))
        raise UsageError(f"{path} does not validate: replay refused (see the checks above)")
    return ev, facts


def _drift(files, items: list, allow: bool, say) -> list:
    """Why this machine is not the one the records were made on (empty: it is): every
    provenance field evidence/provenance.py compares, each drift naming its field."""
    from ..running import devices, environment
    here = environment.record(None)
    here["harness"] = environment.provenance([], {}, "")["harness"]
    out = []
    for name in sorted({it.source for it in items}):
        recorded = dict(_environment(files, name))
        data = files.doc(name)
        if isinstance(data, dict) and isinstance(data.get("provenance"), dict):
            recorded["harness"] = data["provenance"].get("harness")
        out += [f"{name}: {line}" for line in provenance.drift(recorded, here)]
    missing = sorted({it.device for it in items} - set(devices.available()))
    out += [f"records on {d}: this MLX has no {d} device" for d in missing]
    for line in out:
        say(("drift (allowed): " if allow else "not reproduced here: ") + line)
    return [] if allow else out


def _environment(files, name: str) -> dict:
    """The environment a record was made in: its results file's, or its fuzz run's."""
    data = files.doc(name)
    env = data.get("environment") if isinstance(data, dict) and "environment" in data else None
    if env is None:
        folder = paths.folder(name)
        if folder.endswith(paths.FINDINGS_DIR + "/"):
            folder = folder[:-len(paths.FINDINGS_DIR) - 1]
        env = files.doc(folder + paths.ENVIRONMENT)
    return env if isinstance(env, dict) else {}


def _records(items: list, args, say) -> tuple:
    """(outcomes, reproduced?) for run records and fuzz findings."""
    from ..running import devices
    from . import terminal
    say(f"replaying {len(items)} records")
    with terminal.progress(len(items), "replay") as tick:
        outcomes = R.replay(items, devices.available(), lambda o: tick(_tick_record(o)),
                            jobs=args.jobs or min(4, _cpus()))
    terminal.print_replay(outcomes)
    return outcomes, all(o.reproduced for o in outcomes)


def _tick_record(o) -> dict:
    return {"status": (o.replayed or {}).get("status", "-"), "scenario": o.item.name}


def _cpus() -> int:
    import os
    return os.cpu_count() or 1


def main(args) -> int:
    options.require("mlx", "numpy", "rich", what="mlx-vjpcheck replay")
    ev, facts = _validated(args.evidence)
    from . import terminal
    c = terminal.console(stderr=True)
    say = lambda text: c.print(terminal.escape(text))  # noqa: E731
    todo = replayplan.plan(ev.files, ev.files.doc)
    if not todo.ok:   # refused, with the reasons: never replayed in part
        return _verdict([], [f"refused: {why}" for why in todo.refused], say)
    if todo.layout == "gate":
        from . import replay_native
        return replay_native.gate(args, say)
    return _verdict(*_replay_layout(todo.layout, ev, facts, args, say), say)


def _replay_layout(layout: str, ev, facts, args, say) -> tuple:
    """(rows, refusals) for one run directory's layout: every record of it executed again."""
    from . import replay_native
    files = ev.files
    if layout in ("run", "fuzz"):
        items = R.collect(files)
        results, refused = [], []
        if items:
            if _drift(files, items, args.allow_drift, say):
                return [], ["the evidence was recorded elsewhere (--allow-drift replays it anyway)"]
            outcomes, ok = _records(items, args, say)
            results.append(("records", ok, f"{sum(o.reproduced for o in outcomes)} of {len(outcomes)} reproduced"))
        if layout == "fuzz":
            results += [replay_native.campaign(files, fz, args, say) for fz in facts.fuzz]
        if not results:
            refused.append("the evidence holds no record to execute again")
        return results, refused
    name = {"sweep": paths.SWEEP, "gradcheck": paths.GRADCHECK, "versions": paths.VERSIONS,
            "native-wheel": paths.RESULTS}[layout]
    if layout == "versions":   # its releases run in environments of this machine's Python
        if _drift(files, [_Case(name, files.doc(name).get("device", "cpu"))], args.allow_drift, say):
            return [], [f"{name}: recorded elsewhere (--allow-drift replays it anyway)"]
        return [replay_native.versions(files, name, args, say)], []
    if layout == "native-wheel":
        devices = {r["device"] for r in files.doc(name)["records"]} or {"cpu"}
        if _drift(files, [_Case(name, d) for d in sorted(devices)], args.allow_drift, say):
            return [], [f"{name}: recorded elsewhere (--allow-drift replays it anyway)"]
        return [replay_native.wheel(files, name, args, say)], []
    row = (_sweep if layout == "sweep" else _gradcheck)(files, name, args, say)
    return ([row], []) if row[0] else ([], [row[1]])


GRADCHECK_ATTEMPTS = 3   # a disagreeing verdict is measured again (values MLX cannot repeat)
GRADCHECK_TIMEOUT_S = 600


def _verdicts(checks: list) -> dict:
    """Each check's verdict, keyed by what it compares (not by the worst element's place)."""
    from collections import Counter
    return Counter((c["transform"], c["dtype"], c["input"], c["status"]) for c in checks)


def _gradcheck_once(doc: dict) -> tuple:
    """(the checks of one new run, or None, and why not)."""
    import os
    import subprocess
    import tempfile

    from ..core import jsonio
    from . import gradcheck as G
    with tempfile.TemporaryDirectory(prefix="vjpcheck-replay-") as tmp:
        out = os.path.join(tmp, "report.json")
        try:
            p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck", "gradcheck", *G.argv_of(doc, out)],
                               cwd=doc["import_root"], capture_output=True, text=True, timeout=GRADCHECK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return None, f"mlx-vjpcheck gradcheck ran past {GRADCHECK_TIMEOUT_S} s"
        if p.returncode not in (0, 1) or not os.path.isfile(out):
            tail = (p.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"mlx-vjpcheck gradcheck exited {p.returncode}: {tail}"
        with open(out, encoding="utf-8") as fh:
            return jsonio.loads(fh.read())["checks"], ""


def _changed_sources(doc: dict) -> list:
    """The recorded module files that are not, byte for byte, the ones there now."""
    import hashlib
    import os
    out = []
    for src in doc["sources"]:
        path, want = src["file"], src["sha256"]
        if want is None:
            continue
        now = hashlib.sha256(open(path, "rb").read()).hexdigest() if path and os.path.isfile(path) else None
        if now != want:
            out.append(f"{src['module']} ({path}): {'missing' if now is None else 'not the file that was checked'}")
    return out


def _gradcheck(files, name: str, args, say) -> tuple:
    """(row, or (None, why refused)) for one gradcheck.json: the function imported and checked again."""
    import os
    doc = files.doc(name)
    root, devices = doc["import_root"], sorted((doc["environment"].get("devices") or {}))
    if not os.path.isdir(root):
        return None, f"{name}: its import root {root} is not a directory here: {doc['target']} cannot be imported"
    if _drift(files, [_Case(name, d) for d in devices], args.allow_drift, say):
        return None, f"{name}: recorded elsewhere (--allow-drift replays it anyway)"
    changed = _changed_sources(doc)
    if changed:
        return None, f"{name}: the modules it checked changed since: " + "; ".join(changed)
    want = _verdicts(doc["report"]["checks"])
    say(f"gradcheck {name}: {doc['target']} with {doc['inputs']} imported from {root}, all "
        f"{len(doc['report']['checks'])} checks again")
    diff = None
    for _ in range(GRADCHECK_ATTEMPTS):
        checks, why = _gradcheck_once(doc)
        if checks is None:
            return None, f"{name}: refused: {why}"
        got = _verdicts(checks)
        if got == want:
            return f"gradcheck {name}", True, f"all {len(checks)} verdicts reproduced"
        diff = sorted((want - got).items()) + sorted((got - want).items())
    for (transform, dtype, leaf, status), _n in diff:
        say(f"NOT reproduced: {name}: {transform} [{dtype}] d / d {leaf}: {status} "
            f"{'recorded, not given now' if (transform, dtype, leaf, status) in want else 'now, not recorded'}")
    return f"gradcheck {name}", False, "the verdicts differ"


class _Case:
    """What _drift reads of a record: where it was recorded, and on which device."""

    def __init__(self, source: str, device: str):
        self.source, self.device = source, device


def _sweep(files, name: str, args, say) -> tuple:
    """(row for the trust line, or (None, why it was refused)) for one sweep.json."""
    from ..sweep import replay as SR
    doc = files.doc(name)
    devices = sorted((doc["environment"].get("devices") or {}))
    if len(devices) != 1:
        return None, f"{name}: the sweep records {len(devices)} devices, not the one it ran on"
    if _drift(files, [_Case(name, devices[0])], args.allow_drift, say):
        return None, f"{name}: recorded elsewhere (--allow-drift replays it anyway)"
    records = doc["records"]
    sample = len(records) if args.sample is None else args.sample   # every record, unless asked
    chosen, sampled, clean = SR.choose(records, sample)
    say(f"sweep {name}: running again all {len(chosen) - sampled} records that are not a clean pass and "
        f"{sampled} of {clean} clean passes drawn at random (--sample)")
    outcomes = SR.replay(records, chosen, devices[0], jobs=args.jobs or min(2, _cpus()))
    for o in outcomes:
        for why in o.problems:
            say(f"NOT reproduced: {o.name}: {why}")
        if o.note:
            say(f"note: {o.name}: {o.note}")
    good = sum(o.reproduced for o in outcomes)
    left = clean - sampled   # not executed again: the sweep as a whole is then not reproduced
    return (f"sweep {name}", good == len(outcomes) and not left,
            f"{good} of {len(outcomes)} records reproduced" + (
                f"; {left} of {clean} clean passes not executed again (--sample {sampled})" if left else ""))


def _verdict(results: list, refused: list, say) -> int:
    """The trust line, and the exit code."""
    ok = bool(results) and not refused and all(r[1] for r in results)
    parts = "; ".join(f"{what}: {detail}" for what, good, detail in results)
    import mlx.core as mx
    where = f"mlx {mx.__version__} on {platform.system()} {platform.machine()}"
    if ok:
        line = f"trust: reproduced on {where} ({parts})"
    else:
        line = f"trust: NOT reproduced on {where} ({'; '.join(x for x in [parts, *refused] if x)})"
    print(visible(line))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(options.not_a_program("replay"))

"""What the evidence shows, beside whether it is intact, and how far that can be
trusted: one line per evidence file, the binding or reproducibility under it,
one trust line, and the claims `validate --expect` can demand.

    evidence: mlx 0.32.4 cpu, 568 pass, 61 fail, 12 error (defects present)
      bound: the whole catalog (641 scenarios) on cpu
    fuzz: 18 findings from 1765 cases on mlx 0.32.4 cpu (defects present)
      absence of other findings: not reproducible (it ended on its time budget ...)
    trust: consistent (...); not reproduced here (...); self-attested: the signature was not checked

The three trust levels (harness/validation/README.md says what each proves):
consistent (this validator: integrity, recomputation, binding, cross-checks,
no MLX), reproduced (`mlx-vjpcheck replay` re-executes it), attested (a
signature by a builder you trust, checked with `gh attestation verify`).

Claims: `pass` (every record passes and the records are the whole catalog),
`defects` (some bound record set, or a fuzz finding, shows a defect),
`gate-pass` (every re-derived gate table passes over the whole catalog and
corpus, and MLX's own tests do not regress). Unbound or partial evidence
supports no claim unless the caller allows it (--allow-unbound), and a fuzz
campaign's silence never supports `pass` offline.

Computed from the same files the checks validated (a line is only as good as
the checks above it, which the caller prints first).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..evidence import paths

EXPECTATIONS = ("pass", "defects", "gate-pass")

CONSISTENT = ("consistent (checked offline, without MLX: hashes, schemas, every value recomputed from "
              "the float64 references, every verdict re-derived, catalog binding, cross-checks)")
NOT_REPRODUCED = ("not reproduced here (only re-execution shows MLX gives the recorded values: "
                  "`mlx-vjpcheck replay EVIDENCE`)")
SELF_ATTESTED = ("self-attested: the signature was not checked (`mlx-vjpcheck validate BUNDLE.zip "
                 "--attested-by OWNER/REPO` runs `gh attestation verify`)")


@dataclass
class Claims:
    """For each claim: None when the evidence supports it, else why not."""
    why_not: dict = field(default_factory=lambda: {c: "the evidence shows nothing of the kind"
                                                   for c in EXPECTATIONS})

    def support(self, claim: str) -> None:
        if self.why_not.get(claim) == "the evidence shows nothing of the kind":
            self.why_not[claim] = None

    def refuse(self, claim: str, why: str) -> None:
        if self.why_not.get(claim) in (None, "the evidence shows nothing of the kind"):
            self.why_not[claim] = why


def _mlx(env) -> str:
    return str(env.get("mlx") or "unknown") if isinstance(env, dict) else "unknown"


def _results(name: str, data: dict, bind, claims: Claims, allow: bool) -> list:
    s = data["summary"]
    counts = ", ".join(f"{s[k]} {k}" for k in ("pass", "fail", "error", "crashed") if s[k])
    devices = " ".join(s["devices"])
    bad = s["fail"] + s["error"] + s["crashed"]
    what = "defects present" if bad else ("all pass" if s["total"] else "no records")
    where = "" if paths.basename(name) == paths.RESULTS else f" {name}:"
    lines = [f"evidence:{where} mlx {_mlx(data['environment'])} {devices}, {counts or '0 records'} ({what})"]
    if paths.basename(name) != paths.RESULTS:   # a gate's builds: the gate's rows below are their claim
        return lines + ["  one build of a native gate: its rows are re-derived below"]
    lines.append(f"  {bind.scope}" if bind else "  unbound")
    ok = bind is not None and (bind.full or allow) and (bind.bound or allow)
    why = None if ok else (f"{name} is {bind.scope if bind else 'unbound'}" + ("" if allow else
                           " (--allow-unbound accepts it)"))
    if bad:
        claims.support("defects") if (bind and bind.bound) or allow else claims.refuse("defects", why)
        claims.refuse("pass", f"{name} shows defects")
    elif s["total"]:
        claims.support("pass") if ok else claims.refuse("pass", why)
    return lines


def _fuzz(files, facts, claims: Claims, allow: bool) -> list:
    folder = facts.folder
    camp = files.doc(folder + paths.CAMPAIGN)
    camp = camp if isinstance(camp, dict) else {}
    env = files.doc(folder + paths.ENVIRONMENT)
    n = facts.findings
    note = ", interrupted" if facts.interrupted else ""
    lines = [f"fuzz:{' ' + folder if folder else ''} {n} findings from {(camp.get('stats') or {}).get('cases', '?')} "
             f"cases on mlx {_mlx(env)} {camp.get('device', '?')}{note} "
             f"({'defects present' if n else 'no defect found'})"]
    if facts.replayable["by_seed"]:
        lines.append("  absence of other findings: reproducible by seed (`mlx-vjpcheck replay` runs it again: "
                     f"{facts.replayable['why']})")
    else:
        lines.append(f"  absence of other findings: not reproducible ({facts.replayable['why']}); "
                     "no offline check can show that a campaign found nothing more")
    if n:
        claims.support("defects")
        claims.refuse("pass", f"{folder}{paths.FINDINGS} holds findings")
    elif allow:
        claims.support("pass")
    else:
        claims.refuse("pass", "a fuzz campaign that found nothing proves no absence offline "
                              "(--allow-unbound accepts it)")
    return lines


def _gate(files, gate, mlx_tests: dict, claims: Claims, allow: bool) -> list:
    lines = [f"gate: {gate.line}"]
    if not gate.bound:
        lines.append("  unbound: the gate did not run the whole catalog and regression corpus")
    if gate.self_declared:
        lines.append(f"  {gate.self_declared} rows take their scope from scenario files given to the gate "
                     "(not re-derivable offline)")
    tests_ok, tests_line = mlx_tests.get("", (True, None))
    if tests_line:
        lines.append(f"  {tests_line}")
    problems = [] if gate.ok else ["its table does not pass"]
    problems += rebuild_problems(files)
    if not tests_ok:
        problems.append("MLX's own tests regress")
    if not allow and not gate.bound:
        problems.append("it is unbound (--allow-unbound accepts it)")
    if not allow and gate.self_declared:
        problems.append("some rows' scope is self-declared (--allow-unbound accepts it)")
    if problems:
        claims.refuse("gate-pass", f"gate {gate.folder or './'}: " + "; ".join(problems))
    else:
        claims.support("gate-pass")
    return lines


def rebuild_problems(files) -> list:
    """What a gate's evidence lacks to be rebuilt and run again (build_and_test.py --replay):
    the MLX checkout commit, the patch with its recorded hash, the build flags of every unit
    it compiled, the exact scenarios every row ran, and MLX's own test results. A gate table
    written by hand holds none of them; `gate-pass` needs them all."""
    import hashlib
    import re
    env = files.doc(paths.ENVIRONMENT)
    native = env.get("native") if isinstance(env, dict) else None
    if not isinstance(native, dict):
        return [f"no build record ({paths.ENVIRONMENT} has no 'native' record): it cannot be rebuilt"]
    out = []
    if not re.fullmatch(r"[0-9a-f]{40}", str(native.get("mlx_checkout_commit") or "")):
        out.append("no MLX checkout commit")
    patch = files[paths.PATCH] if paths.PATCH in files else None
    if not patch:
        out.append(f"no {paths.PATCH}")
    elif hashlib.sha256(patch).hexdigest() != native.get("patch_sha256"):
        out.append(f"{paths.PATCH} is not the patch whose hash the build records")
    flags = native.get("unit_flags")
    units = native.get("units")
    if native.get("opt") not in ("as-built", "O0") or not isinstance(flags, dict) or not flags or \
            not isinstance(units, list) or any(not isinstance(flags.get(u), list) for u in units if u in flags) \
            or not set(flags) <= set(units):
        out.append("no build flags for the units it compiled (opt, unit_flags)")
    out += _scenario_problems(files)
    tests = files.doc("mlx-tests.json")
    if not isinstance(tests, dict) or not tests.get("rows"):
        out.append("no MLX test results (mlx-tests.json with rows: a gate run with --mlx-tests none "
                   "does not show MLX's own tests pass)")
    return out


def _scenario_problems(files) -> list:
    """Every row of every comparison ran a scenario of the gate's scenarios.json."""
    doc = files.doc(paths.SCENARIOS)
    listed = doc.get("scenarios") if isinstance(doc, dict) else None
    known = {d.get("name") for d in listed if isinstance(d, dict)} if isinstance(listed, list) else set()
    if not known:
        return [f"no {paths.SCENARIOS} (the exact scenarios the builds ran)"]
    rows = [r.get("scenario") for n in files if paths.basename(n) == paths.COMPARISON
            for r in ((files.doc(n) or {}).get("rows") or []) if isinstance(r, dict)]
    extra = sorted(set(rows) - known)
    return [f"{len(extra)} compared scenarios are not in {paths.SCENARIOS} (first {extra[:1]})"] if extra else []


def _versions(files, folder: str) -> list:
    doc = files.doc(folder + paths.VERSIONS)
    first = doc["first_affected"]
    parts = [f"{pid} first affected {v.get('first') or 'none'}" for pid, v in sorted(first.items())]
    return ["versions: " + ("; ".join(parts) or "no probes"),
            "  each cell is the recorded exit code of a probe run; `mlx-vjpcheck replay` runs the probes again"]


def _sweep(facts, files, claims: Claims, allow: bool) -> list:
    doc = files.doc(facts.folder + paths.SWEEP)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(facts.by_status.items()))
    lines = [f"sweep:{' ' + facts.folder if facts.folder else ''} {facts.cases} cases on mlx "
             f"{_mlx(doc.get('environment'))} ({counts or 'no cases'}): {facts.findings} findings, "
             f"{facts.unexplained} unexplained by a registered class",
             "  reference-free (MLX's own float64 evaluation, differentiated numerically); findings and counts "
             "re-derived from the records, `mlx-vjpcheck replay` runs the cases again"]
    if facts.findings:
        claims.support("defects")
        claims.refuse("pass", f"{facts.folder}{paths.SWEEP} holds findings")
    elif not allow:
        claims.refuse("pass", "a sweep is checked against no catalog: its silence is not a catalog pass "
                              "(--allow-unbound accepts it)")
    else:
        claims.support("pass")
    return lines


def _gradcheck(folder: str, files, claims: Claims, allow: bool) -> list:
    doc = files.doc(folder + paths.GRADCHECK)
    checks = doc["report"]["checks"]
    failing = sum(c["status"] == "fail" for c in checks)
    lines = [f"gradcheck:{' ' + folder if folder else ''} {doc['target']} on mlx {_mlx(doc['environment'])}: "
             f"{failing} of {len(checks)} checks fail ({'gradients disagree' if failing else 'all agree'})",
             "  failing verdicts re-derived from their numbers; `mlx-vjpcheck replay` imports the function again "
             "and compares every check"]
    if failing:
        claims.support("defects")
        claims.refuse("pass", f"{folder}{paths.GRADCHECK} has failing checks")
    elif allow:
        claims.support("pass")
    else:
        claims.refuse("pass", "a gradcheck of one function is checked against no catalog (--allow-unbound accepts it)")
    return lines


def lines(files: dict, facts, allow_unbound: bool = False) -> tuple:
    """(verdict lines, Claims) from the validated files and the facts the checks gathered."""
    from ..evidence import strict   # here, not above: the CLI reads EXPECTATIONS before numpy loads
    files = strict.as_files(files)
    claims, out = Claims(), []
    binds = {b.file: b for b in facts.bindings}
    for name in sorted(binds):
        out += _results(name, files.doc(name), binds[name], claims, allow_unbound)
    for gate in facts.gates:
        out += _gate(files, gate, facts.mlx_tests, claims, allow_unbound)
    for fz in facts.fuzz:
        out += _fuzz(files, fz, claims, allow_unbound)
    for folder in facts.versions:
        out += _versions(files, folder)
    for sw in facts.sweeps:
        out += _sweep(sw, files, claims, allow_unbound)
    for folder in facts.gradchecks:
        out += _gradcheck(folder, files, claims, allow_unbound)
    return out, claims


def trust_line(attested: str | None) -> str:
    """The level the validator reached, and the two it did not check."""
    return f"trust: {CONSISTENT}; {NOT_REPRODUCED}; {attested or SELF_ATTESTED}"

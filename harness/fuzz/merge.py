"""Merge fuzz campaigns run on several machines, and propose corpus candidates.

    python3 -m mlx_vjpcheck.fuzz.merge FINDINGS_DIR... --out DIR [--corpus DIR] [--replace]

Each FINDINGS_DIR is the output of one `mlx-vjpcheck fuzz` (a CI job of
.github/workflows/fuzz-campaign.yml, a colleague's laptop, a `--shards` run).
Every input is checked first (a fuzz run directory whose MANIFEST.sha256 holds),
then the findings are merged by signature exactly as `--shards` merges its
shards (`findings.merge`: the smallest counterexample is kept, ties to the
earliest minimal), and DIR is written whole as a fuzz run directory that
validate_artifacts.py accepts:

  findings.json, findings/<signature>.json + _repro.py   the merged findings;
                          each finding's `shard` is the index of its input
  campaign.json           the inputs' statistics summed (as --shards does), and
                          `merged_from`: each input's directory, seeds, device,
                          budget and environment; `known` and `candidates`
  environment.json        the first input's environment (each input's is in
                          campaign.json)
  candidates/<signature>.json
                          every merged signature the regression corpus
                          (harness/regressions/, harness/cases/files.py) does
                          not hold yet, in the corpus's format
                          (mlx-vjpcheck/regression/1) so that it loads with
                          `--scenarios`, and with what a person must decide
                          before it joins the corpus left open: `class` is null,
                          `in_scope` false with the reason "untriaged", and
                          `pristine` is the status the campaign's own record
                          shows on the MLX it ran (`candidate.note` says to
                          re-record it on the corpus's MLX).

Exit status: 0 merged, no new signature; 1 merged, candidates written; 2 bad
input (one line on stderr, nothing written); 130 interrupted.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..cases import files
from ..core import jsonio
from ..core.errors import UsageError
from ..evidence import atomic, manifest, paths, rundir
from . import campaign, findings

PROG = "mlx_vjpcheck.fuzz.merge"   # run as: python3 -m mlx_vjpcheck.fuzz.merge
CANDIDATES_DIR = "candidates"
SIGNATURE = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]*")
UNTRIAGED = ("untriaged fuzz-campaign candidate: decide its defect class and whether patch/ "
             "is meant to fix it before it joins harness/regressions/")
NOTE = ("written by mlx_vjpcheck.fuzz.merge; 'pristine' is the campaign's own record on the MLX "
        "it ran: re-record it through the runner on the corpus's MLX (0.32.4, CPU) as "
        "harness/regressions/README.md describes, set 'class' (and the scenario's defect_tags to "
        "[class]) and 'in_scope', and drop this 'candidate' header before adding the file to "
        "harness/regressions/")


class Source:
    """One input campaign, loaded and checked."""

    def __init__(self, root: Path, index: int):
        self.root, self.index = root, index
        self.findings = _load(root, lambda: findings.load(root))
        self.info = _load(root, lambda: findings.load_campaign(root))
        self.environment = _load(root, lambda: jsonio.loads(
            (root / paths.ENVIRONMENT).read_text(encoding="utf-8")))
        if not isinstance(self.info, dict) or not isinstance(self.environment, dict):
            raise UsageError(f"{root}: campaign.json and environment.json must be JSON objects")
        for f in self.findings:
            if not isinstance(f.signature, str) or not SIGNATURE.fullmatch(f.signature):
                raise UsageError(f"{root}: finding signature {f.signature!r} is not a file name")
            if not isinstance(f.record, dict) or not isinstance(f.scenario, dict):
                raise UsageError(f"{root}: finding {f.signature} has no scenario or record")

    def summary(self) -> dict:
        i = self.info
        return {"dir": str(self.root), "seeds": i.get("seeds", [i.get("seed")]), "device": i.get("device"),
                "budget_s": i.get("budget_s"), "interrupted": bool(i.get("interrupted")),
                "findings": len(self.findings), "environment": self.environment}


def _load(root: Path, read):
    try:
        return read()
    except OSError as e:
        raise UsageError(f"{root}: cannot read {Path(e.filename or '?').name} "
                         f"({e.strerror or type(e).__name__})") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise UsageError(f"{root}: not a fuzz output directory this version reads "
                         f"({type(e).__name__}: {e})") from None


def check_source(path: str) -> Path:
    """A fuzz run directory whose files all match its manifest."""
    root = Path(path)
    if not root.is_dir():
        raise UsageError(f"{root}: no such directory")
    if rundir.kind_of(root) != "fuzz":
        raise UsageError(f"{root}: not an mlx-vjpcheck fuzz output directory (no findings.json)")
    try:
        entries = manifest.parse((root / manifest.NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UsageError(f"{root}: {manifest.NAME} unreadable or malformed ({e})") from None
    listed = set()
    for digest, rel in entries:
        f = root / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise UsageError(f"{root}: {manifest.NAME} lists a path outside the directory: {rel}")
        if not f.is_file() or manifest.sha256(f.read_bytes()) != digest:
            raise UsageError(f"{root}: {rel} does not match {manifest.NAME}")
        listed.add(rel)
    unlisted = sorted(set(manifest.files(root)) - listed)
    if unlisted:
        raise UsageError(f"{root}: {unlisted[0]} is not in {manifest.NAME}")
    return root


def known_signatures(corpus) -> set:
    root = Path(corpus)
    if not root.is_dir():
        raise UsageError(f"--corpus {root}: no such directory")
    try:
        entries = files.regressions(root)
    except files.ScenarioFileError as e:
        raise UsageError(f"--corpus: {e}") from None
    return {e.meta.get("signature") or Path(e.source).stem for e in entries}


def detail_of(rec: dict) -> str:
    """What the record says went wrong, as the corpus's `pristine.detail` words it."""
    if rec.get("error"):
        return str(rec["error"])
    failed = [c for c in rec.get("checks") or [] if isinstance(c, dict) and not c.get("passed")]
    failed.sort(key=lambda c: c.get("kind") != "reference")
    if failed:
        return f"{failed[0].get('name')}: {failed[0].get('reason')}"
    return str(rec.get("status"))


def candidate(f, sources: list, found_in: list) -> dict:
    """A regression-corpus entry for finding `f` (kept from sources[f.shard])."""
    src = sources[f.shard]
    scenario = dict(f.scenario, name=f"regress/{f.signature}")
    if not scenario.get("description"):
        scenario["description"] = f"fuzz finding: {f.kind} in {f.gradient} ({f.oracle} oracle), form {f.form}"
    env = src.environment
    return {
        "schema": files.REGRESSION_SCHEMA,
        "signature": f.signature,
        "class": None,
        "scenario": scenario,
        "pristine": {"mlx": env.get("mlx"), "device": f.device, "status": f.record.get("status"),
                     "detail": detail_of(f.record), "platform": env.get("platform")},
        "in_scope": False,
        "out_of_scope_reason": UNTRIAGED,
        "found": {"seeds": sorted({s for s in (x["seed"] for x in found_in) if isinstance(s, int)}),
                  "size": f.size},
        "candidate": {"note": NOTE, "kept_from": str(src.root), "scenario_name": f.scenario.get("name"),
                      "oracle": f.oracle, "oracles": f.oracles, "kind": f.kind, "gradient": f.gradient,
                      "form": f.form, "found_in": found_in},
    }


def merge(sources: list, known: set) -> dict:
    """Everything the output directory holds, computed before anything is written."""
    groups = []
    seen = {}
    for src in sources:
        for f in src.findings:
            f.shard = src.index
            seen.setdefault(f.signature, []).append(
                {"dir": str(src.root), "seed": f.seed, "device": f.device,
                 "platform": src.environment.get("platform"), "size": f.size})
        groups.append(src.findings)
    merged = findings.merge(groups)
    try:
        info = campaign.merge_info([s.info for s in sources], sources[0].info.get("seed"), len(sources))
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"campaign.json of the inputs cannot be merged ({type(e).__name__}: {e})") from None
    new = [f for f in merged if f.signature not in known]
    info.update(interrupted=any(s.info.get("interrupted") for s in sources),
                merged_from=[s.summary() for s in sources],
                known=sorted(f.signature for f in merged if f.signature in known),
                candidates=[f.signature for f in new])
    info["findings"] = [{k: getattr(f, k) for k in ("signature", "time_found_s", "time_minimal_s", "size",
                                                    "shard", "from_database")} for f in merged]
    campaign.finish(info)   # merged from elsewhere: not replayable by seed, and it says so
    return {"findings": merged, "campaign": info, "environment": sources[0].environment,
            "candidates": {f.signature: candidate(f, sources, seen[f.signature]) for f in new},
            "total": sum(len(g) for g in groups)}


def write(out: Path, result: dict, replace: bool) -> None:
    with rundir.staged(out, "fuzz", replace) as tmp:
        findings.write(tmp, result["findings"], result["campaign"], result["environment"])
        for sig, entry in result["candidates"].items():
            atomic.write_text(Path(tmp) / CANDIDATES_DIR / f"{sig}.json",
                              jsonio.dumps(entry, indent=1, sort_keys=True) + "\n")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG,
                description="Merge fuzz output directories by signature (smallest counterexample kept) "
                            "and write each signature the regression corpus lacks as a corpus candidate.",
                epilog="exit status: 0 merged, no new signature; 1 merged, candidates written; "
                       "2 bad input (one line, nothing written); 130 interrupted")
    p.add_argument("inputs", nargs="+", metavar="FINDINGS_DIR", help="mlx-vjpcheck fuzz output directories")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="merged fuzz run directory, with candidates/ (written whole, or not at all)")
    p.add_argument("--corpus", default=str(files.CORPUS_DIR), metavar="DIR",
                   help="the regression corpus whose signatures are known (default: the installed "
                        "harness/regressions/)")
    p.add_argument("--replace", action="store_true",
                   help="replace an earlier merge (any fuzz output) at --out")
    return p


def run(argv=None) -> int:
    args = parser().parse_args(argv)
    roots = [check_source(p) for p in args.inputs]
    resolved = [r.resolve() for r in roots]
    for n, r in enumerate(resolved):
        if r in resolved[:n]:
            raise UsageError(f"{roots[n]}: given twice")
    out = Path(args.out)
    if out.resolve() in resolved or any(out.resolve().is_relative_to(r) for r in resolved):
        raise UsageError(f"--out {out}: must not be (inside) one of the inputs")
    try:
        rundir.check_target(out, "fuzz", args.replace)
    except rundir.OutDirError as e:
        raise UsageError(str(e)) from None
    known = known_signatures(args.corpus)
    sources = [Source(r, n) for n, r in enumerate(roots)]
    result = merge(sources, known)
    write(out, result, args.replace)
    merged, new = result["findings"], result["candidates"]
    print(f"{len(merged)} signatures from {len(sources)} campaigns ({result['total']} findings); "
          f"{len(merged) - len(new)} already in the corpus, {len(new)} new"
          + (f" -> {out / CANDIDATES_DIR}/" if new else "") + f"  ({out / paths.FINDINGS})")
    for sig, entry in new.items():
        print(f"candidate {sig}  size {entry['found']['size']}  seeds {entry['found']['seeds']}")
    return 1 if new else 0


def main(argv=None) -> int:
    try:
        return run(argv)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; nothing written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

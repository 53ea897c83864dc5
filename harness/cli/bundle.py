"""`mlx-vjpcheck bundle DIR`: a deterministic evidence zip and, beside it, its
in-toto test-result attestation (BUNDLE.intoto.json); prints the bundle's SHA-256.

Both outputs are checked before any work (writable, ours, --replace) and
published together: both or neither.
"""
from __future__ import annotations

import io
import os
import sys
import zipfile
from pathlib import Path

from .. import __version__
from ..core.errors import UsageError
from ..evidence import atomic, attest, bundle, manifest
from ..evidence.load import BadInput
from ..evidence.text import visible
from ..validation import evidence
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="pack an evidence directory into a deterministic zip with SUMMARY.md "
                                  "and an in-toto test-result attestation beside it")
    p.add_argument("dir", metavar="DIR", help="run directory (it must validate)")
    p.add_argument("--out", metavar="FILE.zip",
                   help="the bundle (default: DIR.zip next to DIR); the attestation is FILE.zip.intoto.json")
    options.add_replace(p)
    p.add_argument("--skip-probes", action="store_true",
                   help="do not run the probes (the summary then says none were recorded)")
    p.set_defaults(func=main)


def _out_path(args) -> Path:
    src = Path(args.dir)
    if not src.exists():
        raise UsageError(f"{src}: no such file or directory")
    out = Path(args.out) if args.out else src.parent / (src.resolve().name + ".zip")
    if src.is_dir() and src.resolve() in out.resolve().parents:
        raise UsageError(f"--out {out} lies inside {src}: the bundle would bundle itself")
    if out.resolve() == src.resolve():
        raise UsageError(f"--out {out} is the evidence itself")
    if attest.path_for(out).resolve() == src.resolve():
        raise UsageError(f"--out {out}: its attestation {attest.path_for(out)} would be the evidence itself")
    return options.out_file(out, "bundle", args.replace, "--out")


def _attestation_path(out: Path, replace: bool) -> Path:
    """The same rules as the bundle's: never a foreign file, our own only with --replace."""
    path = attest.path_for(out)
    if path.is_dir() and not path.is_symlink():
        raise UsageError(f"--out {out}: its attestation path {path} is a directory")
    if path.exists() or path.is_symlink():
        if not attest.is_ours(path):
            raise UsageError(f"--out {out}: {path} exists and is not an mlx-vjpcheck attestation: not overwriting it")
        if not replace:
            raise UsageError(f"--out {out}: {path} already exists: pass --replace to replace it")
    return path


def publish(pairs: list) -> None:
    """Write every (path, bytes) or none: all temp files first, then the renames;
    on any failure (an interrupt included) the earlier files are put back."""
    staged, moved, placed = [], [], []
    try:
        for path, data in pairs:
            staged.append((atomic.prepare(path, data), Path(path)))
        for _, path in staged:
            if path.exists():
                old = path.with_name(f".{path.name}.old-{os.getpid()}")
                os.replace(path, old)
                moved.append((old, path))
        for tmp, path in staged:
            os.replace(tmp, path)
            placed.append(path)
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        for path in placed:
            path.unlink(missing_ok=True)
        for old, path in moved:
            os.replace(old, path)   # the earlier pair, back in place
        moved = []
        raise
    finally:
        for old, _ in moved:
            Path(old).unlink(missing_ok=True)


def main(args) -> int:
    options.require("numpy", what="mlx-vjpcheck bundle")
    out = _out_path(args)
    att_path = _attestation_path(out, args.replace)
    try:
        data, count = bundle.build(args.dir, evidence.check, run_probes=not args.skip_probes)
    except BadInput as e:
        raise UsageError(str(e)) from None
    except bundle.NotValid as e:
        print("\n".join(visible(line) for line in e.lines))
        print(f"mlx-vjpcheck bundle: {e}; nothing written", file=sys.stderr)
        return 1
    digest = manifest.sha256(data)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:   # the bundle just built, in memory
        files = {info.filename: zf.read(info) for info in zf.infolist()}
    stmt = attest.statement(out.name, digest, files, __version__, attest.github_run_url(os.environ))
    pred = stmt["predicate"]
    if not pred["passedTests"] and not pred["failedTests"]:
        # a test-result statement about no test (a handoff folder, a run of 0 cases) would
        # still read PASSED: the bundle is written, no statement
        publish([(out, data)])
        print(f"bundled {count} files ({len(data)} bytes) into {out}")
        print(f"no attestation: {args.dir} holds no test result to attest (0 cases)")
        print(f"{digest}  {out}")
        return 0
    publish([(out, data), (att_path, attest.render(stmt))])
    print(f"bundled {count} files ({len(data)} bytes) into {out}")
    print(f"attestation {att_path}: test result {pred['result']} "
          f"({len(pred['passedTests'])} passed, {len(pred['failedTests'])} failed)")
    print(f"{digest}  {out}")
    return 0


if __name__ == "__main__":
    sys.exit(options.not_a_program("bundle"))

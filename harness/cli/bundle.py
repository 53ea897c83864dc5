"""`mlx-vjpcheck bundle DIR`: a deterministic evidence zip; prints its SHA-256."""
from __future__ import annotations

import sys
from pathlib import Path

from ..core.errors import UsageError
from ..evidence import atomic, bundle, manifest
from ..evidence.load import BadInput
from ..validation import evidence
from . import options


def add_parser(sub, name):
    p = sub.add_parser(name, help="pack an evidence directory into a deterministic zip with SUMMARY.md")
    p.add_argument("dir", metavar="DIR", help="run directory (it must validate)")
    p.add_argument("--out", metavar="FILE.zip", help="the bundle (default: DIR.zip next to DIR)")
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
    return options.out_file(out, "bundle", args.replace, "--out")


def main(args) -> int:
    options.require("numpy", what="mlx-vjpcheck bundle")
    out = _out_path(args)
    try:
        data, count = bundle.build(args.dir, evidence.check, run_probes=not args.skip_probes)
    except BadInput as e:
        raise UsageError(str(e)) from None
    except bundle.NotValid as e:
        print("\n".join(e.lines))
        print(f"mlx-vjpcheck bundle: {e}; nothing written", file=sys.stderr)
        return 1
    atomic.write_bytes(out, data)
    print(f"bundled {count} files ({len(data)} bytes) into {out}")
    print(f"{manifest.sha256(data)}  {out}")
    return 0

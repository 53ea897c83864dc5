"""`mlx-vjpcheck bundle DIR`: a deterministic evidence zip; prints its SHA-256."""
from __future__ import annotations

import sys
from pathlib import Path

from ..core.errors import UsageError
from ..evidence import atomic, bundle, manifest
from ..evidence.load import BadInput
from ..validation import evidence


def add_parser(sub, name):
    p = sub.add_parser(name, help="pack an evidence directory into a deterministic zip with SUMMARY.md")
    p.add_argument("dir", metavar="DIR", help="run directory (it must validate)")
    p.add_argument("--out", metavar="FILE.zip", help="default: DIR.zip next to DIR")
    p.add_argument("--skip-probes", action="store_true",
                   help="do not run the probes (the summary then says none were recorded)")
    p.set_defaults(func=main)


def _out_path(args) -> Path:
    src = Path(args.dir)
    out = Path(args.out) if args.out else src.parent / (src.resolve().name + ".zip")
    if src.is_dir() and src.resolve() in out.resolve().parents:
        raise UsageError(f"--out {out} lies inside {src}: the bundle would bundle itself")
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory")
    return out


def main(args) -> int:
    out = _out_path(args)
    try:
        data, count = bundle.build(args.dir, evidence.check, run_probes=not args.skip_probes)
    except BadInput as e:
        raise UsageError(str(e))
    except bundle.NotValid as e:
        print("\n".join(e.lines))
        print(f"mlx-vjpcheck bundle: {e}; nothing written", file=sys.stderr)
        return 1
    atomic.write_bytes(out, data)
    print(f"bundled {count} files ({len(data)} bytes) into {out}")
    print(f"{manifest.sha256(data)}  {out}")
    return 0

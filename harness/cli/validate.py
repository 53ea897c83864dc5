"""validate_artifacts.py DIR|ZIP: check an evidence directory or bundle.

Needs numpy only (never mlx, rich or hypothesis): this module and everything
it imports stay on the numpy-only path. Exit 0 every check passed, 1 a check
failed (tampered, inconsistent, hostile), 2 bad input.
"""
from __future__ import annotations

import os
import sys

from .. import ops
from ..evidence.load import BadInput, load
from ..validation import attestation, evidence, verdicts
from . import options


def _plugins() -> None:
    """Ops from $MLX_VJPCHECK_PLUGINS: named by the user, never by the evidence."""
    try:
        ops.registry()
    except ops.PluginError as e:
        raise BadInput(str(e)) from None


def main(argv=None, prog="validate_artifacts.py") -> int:
    ap = options.Parser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="evidence directory or bundle .zip")
    ap.add_argument("--expect", choices=verdicts.EXPECTATIONS,
                    help="also exit 1 unless the evidence shows this: every record passes (pass), "
                         "a defect (defects), or a native gate that passed (gate-pass)")
    args = ap.parse_args(argv)
    try:
        _plugins()
        ev = load(args.path)
        groups = evidence.validate(ev)
    except BadInput as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    extra, not_checked = attestation.check(args.path, ev)   # X.zip.intoto.json beside X.zip
    lines, passed = evidence.report(groups + extra)
    lines[-1:-1] = not_checked
    shown, supported = verdicts.lines(ev.files) if passed else ([], set())
    lines += shown
    if args.expect and passed and args.expect not in supported:
        lines.append(f"expected {args.expect}: the evidence does not show it")
        passed = False
    try:
        print("\n".join(lines), flush=True)
    except BrokenPipeError:   # `| head`: the reader left; the exit code still tells
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if passed else 1

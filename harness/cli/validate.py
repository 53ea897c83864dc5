"""`mlx-vjpcheck validate DIR|ZIP` (also `python3 validate_artifacts.py DIR|ZIP` from a
checkout, and `python3 -m mlx_vjpcheck.cli.validate`): check an evidence
directory or bundle.

Needs numpy only (never mlx, rich or hypothesis): this module and everything
it imports stay on the numpy-only path. Exit 0 every check passed (and the
evidence shows what --expect asks), 1 a check failed (tampered, inconsistent,
hostile) or the evidence does not show it, 2 bad input, 130 interrupted.

Every line it prints names only what it checked: the last lines say what the
evidence shows, whether its records are bound to the catalog, and the trust
level reached (consistent; reproduced and attested are named as not checked
unless --attested-by checks the signature).
"""
from __future__ import annotations

import gc
import os
import sys

from .. import ops
from ..core.errors import UsageError
from ..evidence.load import BadInput, load
from ..evidence.text import visible
from ..validation import arrays, attestation, evidence, verdicts
from . import options

PROG = "mlx-vjpcheck validate"


def _arguments(p) -> None:
    p.add_argument("path", help="evidence directory or bundle .zip")
    p.add_argument("--expect", choices=verdicts.EXPECTATIONS,
                   help="also exit 1 unless the evidence shows this: every record of the whole catalog "
                        "passes (pass), a defect (defects), or a native gate that passed (gate-pass)")
    p.add_argument("--allow-unbound", action="store_true",
                   help="let --expect accept evidence whose records are not bound to this validator's whole "
                        "catalog (scenario files, a filter, another catalog, self-declared gate scope) and a "
                        "fuzz campaign's silence")
    p.add_argument("--attested-by", metavar="OWNER/REPO",
                   help="also check the bundle's signed attestation with `gh attestation verify` (needs the "
                        "GitHub CLI and the network): attested when a workflow of OWNER/REPO signed it")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute this package's catalog table instead of reading it from the cache")


def add_parser(sub, name):
    p = sub.add_parser(name, help="check an evidence directory or bundle (numpy only, no MLX)")
    _arguments(p)
    p.set_defaults(func=main)


def _plugins() -> None:
    """Ops from $MLX_VJPCHECK_PLUGINS: named by the user, never by the evidence."""
    try:
        ops.registry()
    except ops.PluginError as e:
        raise BadInput(str(e)) from None


def _say(lines: list) -> None:
    try:
        print("\n".join(visible(line) for line in lines), flush=True)
    except BrokenPipeError:   # `| head`: the reader left; the exit code still tells
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _attested(args, ev) -> tuple:
    """(line or None, ok): the signature checked with gh when asked for."""
    if not args.attested_by:
        return None, True
    from ..validation import signed
    try:
        return signed.verify(args.path, args.attested_by, ev)
    except signed.Unavailable as e:
        raise UsageError(str(e)) from None


def run(args) -> int:
    """The validation itself; UsageError / BadInput for bad input."""
    # The parsed evidence is a tree of millions of objects that lives to the end, and the
    # rechecks make short-lived ones by the hundred thousand: left on, the cyclic collector
    # walks the tree again and again for cycles the validation does not make (0.2 s).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if enabled:
            gc.enable()


def _run(args) -> int:
    _plugins()
    ev = load(args.path)
    options.keep(ev)   # freed by the end of the process, not object by object on return
    ev.files.release_text = True   # hashes are checked before any parse; only parsed JSON is read after
    ev.files.compact = arrays.for_results   # checks' values as arrays: half the memory of lists
    groups, facts = evidence.validate_all(ev, use_cache=not args.no_cache)
    extra, not_checked = attestation.check(args.path, ev)   # X.zip.intoto.json beside X.zip
    lines, passed = evidence.report(groups + extra)
    lines[-1:-1] = not_checked
    attested, signed_ok = _attested(args, ev) if passed else (None, True)
    passed = passed and signed_ok
    if passed:
        shown, claims = verdicts.lines(ev.files, facts, args.allow_unbound)
        lines += shown + [verdicts.trust_line(attested)]
        if args.expect and claims.why_not[args.expect]:
            lines.append(f"expected {args.expect}: not shown: {claims.why_not[args.expect]}")
            passed = False
    elif attested:
        lines.append(attested)
    _say(lines)
    return 0 if passed else 1


def main(args=None) -> int:
    """The subcommand (cli/main.py's failure policy turns UsageError into exit 2); given
    a list of arguments (or none), the script's form."""
    if args is None or isinstance(args, (list, tuple)):
        return script(args)
    try:
        return run(args)
    except BadInput as e:
        raise UsageError(str(e)) from None


def script(argv=None, prog: str = PROG) -> int:
    """validate_artifacts.py and `python -m`: the same command with its own name."""
    ap = options.Parser(prog=prog, description=__doc__.split("\n\n")[0])
    _arguments(ap)
    args = ap.parse_args(argv)
    try:
        return run(args)
    except (BadInput, UsageError) as e:
        print(f"{prog}: {visible(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return options.interrupted(prog)


if __name__ == "__main__":
    sys.exit(script(prog="python3 -m mlx_vjpcheck.cli.validate"))

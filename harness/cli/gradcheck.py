"""`mlx-vjpcheck gradcheck MODULE:FUNCTION [--inputs MODULE:FACTORY]`: check any MLX
function's gradients (mlx_vjpcheck.gradcheck) from the shell.

FUNCTION is a function or an mlx.nn.Module instance (or a class or factory
taking no arguments that returns one: use --model). Its inputs come from
FACTORY(), which returns the tuple of positional arguments (default: the
function's module's `inputs` when it has one). Modules are imported with the
current directory on sys.path.

Exit codes: 0 every check passed; 1 a check failed (the message and, where
found, a reproducer on stdout); 2 bad input (a name that does not resolve, a
bad option, a function that raises on its inputs): one line on stderr.
--json FILE writes the report as strict JSON (NaN and inf spelled out, see
core/jsonio.py; schema mlx-vjpcheck/gradcheck/1). --out DIR writes it as evidence
instead: a run directory (gradcheck.json, environment.json, MANIFEST.sha256) that
`validate` checks (every failing check's verdict from its numbers, the report's
verdict from its checks) and `replay` runs again (the recorded MODULE:FUNCTION and
inputs factory imported from the recorded import root, this command's directory).
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from ..core import jsonio
from ..core.errors import UsageError
from . import options

SCHEMA = "mlx-vjpcheck/gradcheck/1"
EVIDENCE_SCHEMA = "mlx-vjpcheck/gradcheck-run/1"
REPORT_KEYS = ("checks", "notes", "mode", "passed", "seconds", "shrunk", "reproducer")


def add_parser(sub, name):
    p = sub.add_parser(name, help="check any MLX function's gradients against float64 differences")
    p.add_argument("target", metavar="MODULE:FUNCTION", help="the function (or nn.Module instance) to check")
    p.add_argument("--inputs", metavar="MODULE:FACTORY",
                   help="a callable returning fn's positional arguments (default: MODULE:inputs)")
    p.add_argument("--model", action="store_true",
                   help="FUNCTION is a class or factory to call with no arguments for the nn.Module to check")
    p.add_argument("--order", type=int, choices=(1, 2), default=1)
    p.add_argument("--transforms", default="vjp,jvp,identity,vmap,compile", help="comma-separated")
    p.add_argument("--dtypes", help="comma-separated, among float32,float16,bfloat16,complex64,float64")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--fast", dest="fast", action="store_const", const=True, help="random projections")
    mode.add_argument("--full", dest="fast", action="store_const", const=False, help="every element")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shrink", type=float, default=5.0, metavar="SECONDS")
    p.add_argument("--device", choices=("cpu", "gpu"))
    p.add_argument("--json", metavar="FILE", help="write the report here as strict JSON")
    p.add_argument("--out", metavar="DIR", help="write the report as evidence: a run directory "
                   "(gradcheck.json, environment.json, manifest) that validate and replay take")
    options.add_replace(p)
    p.set_defaults(func=main)


def _resolve(spec: str, flag: str):
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise UsageError(f"{flag} {spec!r}: expected MODULE:NAME")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        obj = importlib.import_module(module)
    except Exception as e:   # the user's module may raise anything while importing
        raise UsageError(f"{flag} {spec!r}: cannot import {module} ({type(e).__name__}: {e})") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{flag} {spec!r}: {module} has no attribute {attr}")
        obj = getattr(obj, part)
    return obj


def _json_target(path, replace: bool) -> Path:
    path = Path(path)
    if path.is_dir() or not path.parent.is_dir():
        raise UsageError(f"--json {path}: not a file in an existing folder")
    if path.exists():
        try:
            ours = json.loads(path.read_text(encoding="utf-8")).get("schema") == SCHEMA
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise UsageError(f"--json {path} exists and is not a gradcheck report: not overwriting it")
        if not replace:
            raise UsageError(f"--json {path} already exists: pass --replace to replace it")
    return path


def _setup(args) -> tuple:
    fn = _resolve(args.target, "MODULE:FUNCTION")
    if args.model:
        fn = fn()
    if not callable(fn):
        raise UsageError(f"MODULE:FUNCTION {args.target!r} is not callable")
    spec = args.inputs or f"{args.target.partition(':')[0]}:inputs"
    factory = _resolve(spec, "--inputs")
    try:
        inputs = factory() if callable(factory) else factory
    except Exception as e:   # the user's factory may raise anything
        raise UsageError(f"--inputs {spec!r} raised {type(e).__name__}: {e}") from None
    if not isinstance(inputs, (tuple, list)):
        raise UsageError(f"--inputs {spec!r} gave {type(inputs).__name__}, not a tuple of positional arguments")
    kw = dict(order=args.order, transforms=tuple(t for t in args.transforms.split(",") if t),
              dtypes=tuple(args.dtypes.split(",")) if args.dtypes else None, fast=args.fast,
              seed=args.seed, shrink=args.shrink, device=args.device, raise_exception=False)
    return fn, tuple(inputs), kw


def _recorded(args) -> dict:
    """What replay needs to run the same check again: the targets as given, the import
    root, and the options as the command line spells them."""
    return {"target": args.target, "inputs": args.inputs or f"{args.target.partition(':')[0]}:inputs",
            "model": bool(args.model), "import_root": str(Path.cwd()),
            "options": {"order": args.order, "transforms": args.transforms, "dtypes": args.dtypes,
                        "fast": args.fast, "seed": args.seed, "device": args.device}}


def argv_of(doc: dict, json_path: str) -> list:
    """The command line that runs a recorded check again (no shrinking: the verdict is compared)."""
    o = doc["options"]
    argv = [doc["target"], "--inputs", doc["inputs"], "--order", str(o["order"]), "--transforms", o["transforms"],
            "--seed", str(o["seed"]), "--shrink", "0", "--json", json_path]
    argv += ["--model"] if doc["model"] else []
    argv += ["--dtypes", o["dtypes"]] if o["dtypes"] else []
    argv += [] if o["fast"] is None else ["--fast" if o["fast"] else "--full"]
    return argv + (["--device", o["device"]] if o["device"] else [])


def sources(doc: dict) -> list:
    """The modules the targets name, each with the file it was imported from and its sha256
    (None without a file): replay holds the files it imports against them."""
    import hashlib
    out = []
    for name in dict.fromkeys(spec.partition(":")[0] for spec in (doc["target"], doc["inputs"])):
        path = getattr(sys.modules.get(name), "__file__", None)
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() if path and Path(path).is_file() else None
        out.append({"module": name, "file": str(Path(path).resolve()) if path else None, "sha256": digest})
    return out


def _write_evidence(args, report) -> None:
    from ..evidence import atomic, paths, rundir
    from ..running import environment
    import mlx.core as mx
    device = args.device or ("gpu" if mx.default_device() == mx.gpu else "cpu")
    env = environment.record([device])
    out = report.to_json()
    doc = {"schema": EVIDENCE_SCHEMA, "kind": "gradcheck", **_recorded(args), "environment": env,
           "report": {k: out[k] for k in REPORT_KEYS}}
    doc["sources"] = sources(doc)
    with rundir.staged(args.out, "gradcheck", args.replace) as tmp:
        atomic.write_json(tmp / paths.GRADCHECK, doc)
        atomic.write_json(tmp / paths.ENVIRONMENT, env)


def main(args) -> int:
    target = _json_target(args.json, args.replace) if args.json else None
    if args.out:
        from ..evidence import rundir
        try:
            rundir.check_target(args.out, "gradcheck", args.replace)
        except rundir.OutDirError as e:
            raise UsageError(str(e)) from None
    fn, inputs, kw = _setup(args)
    from ..evidence import atomic
    from ..gradcheck import api
    try:
        report = api.gradcheck(fn, inputs, **kw)
    except (ValueError, TypeError) as e:
        if str(e).startswith("gradcheck:"):
            raise UsageError(str(e)) from None
        raise UsageError(f"{args.target} raised on its inputs: {type(e).__name__}: {e}") from None
    except Exception as e:   # fn itself may raise anything on its inputs
        raise UsageError(f"{args.target} raised on its inputs: {type(e).__name__}: {str(e)[:200]}") from None
    print(report.message())
    if target is not None:
        atomic.write_text(target, jsonio.dumps({"schema": SCHEMA, "target": args.target, **report.to_json()},
                                               indent=1) + "\n")
    if args.out:
        _write_evidence(args, report)
    return 0 if report.passed else 1

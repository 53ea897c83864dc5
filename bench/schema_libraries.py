"""Why the validator keeps its own JSON Schema checker (harness/validation/schema.py):
the figures behind that choice, measured against the two well-kept libraries that
also compile schemas, on the same results file.

Usage: python bench/schema_libraries.py RESULTS_JSON [--repeat N]
RESULTS_JSON is a `results.json` of a full run (`mlx-vjpcheck run --out RUN`).
Prints, for each checker, its compile time and the best of N checks of the file
(read by the strict reader core/jsonio.py, non-finite numbers as floats, but every
array as a list: the libraries accept JSON types only, while the validator itself reads
large arrays compactly as numpy arrays, which only the in-house checker takes), whether it accepted the
file, and whether it rejects a copy with one record's status made invalid (the
negative control every checker must pass). Libraries that are not installed are
reported as such (`pip install fastjsonschema jsonschema-rs`). On a results file
holding NaN, jsonschema-rs rejects the honest file: NaN becomes null on its way in. Timings depend on the
load: the load average is printed beside them.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlx_vjpcheck.core import jsonio  # noqa: E402
from mlx_vjpcheck.validation import schema  # noqa: E402

RESULTS = "results.schema.json"


def _store() -> dict:
    out = {}
    for path in sorted(schema.SCHEMA_DIR.glob("*.schema.json")):
        doc = json.loads(path.read_text())
        out[doc["$id"]] = doc
    return out


def _ours():
    return lambda data: schema.problem(RESULTS, data) is None


def _fastjsonschema(store: dict, root: dict):
    import fastjsonschema   # draft 4/6/7 only: $defs refs resolve as JSON pointers

    compiled = fastjsonschema.compile(root, handlers={"https": store.__getitem__})

    def ok(data) -> bool:
        try:
            compiled(data)
            return True
        except fastjsonschema.JsonSchemaException:
            return False
    return ok


def _jsonschema_rs(store: dict, root: dict):
    import jsonschema_rs

    registry = jsonschema_rs.Registry(list(store.items()))
    return jsonschema_rs.validator_for(root, registry=registry).is_valid


def _broken(data: dict) -> dict:
    bad = copy.deepcopy(data)
    bad["records"][0]["status"] = "maybe"   # not in the schema's enum
    return bad


def _measure(name: str, make, data: dict, repeat: int) -> None:
    try:
        start = time.perf_counter()
        ok = make()
        built = time.perf_counter() - start
    except ImportError as e:
        print(f"{name:15s} not installed ({e.name})")
        return
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        accepted = ok(data)
        times.append(time.perf_counter() - start)
    rejects = not ok(_broken(data))
    print(f"{name:15s} compile {built * 1e3:7.1f} ms   check best {min(times):7.3f} s   "
          f"accepts honest: {accepted}   rejects broken: {rejects}   load {os.getloadavg()[0]:.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if args.repeat < 1 or not args.results.is_file():
        print("bench/schema_libraries.py: need an existing results.json and --repeat >= 1", file=sys.stderr)
        return 2
    data = jsonio.loads(args.results.read_text())
    store = _store()
    root = store[json.loads((schema.SCHEMA_DIR / RESULTS).read_text())["$id"]]
    print(f"{args.results}: {len(data.get('records', []))} records, "
          f"{args.results.stat().st_size / 2**20:.1f} MiB")
    _measure("in-house", _ours, data, args.repeat)
    _measure("fastjsonschema", lambda: _fastjsonschema(store, root), data, args.repeat)
    _measure("jsonschema-rs", lambda: _jsonschema_rs(store, root), data, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

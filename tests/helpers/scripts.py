"""Run many standalone scripts (reproducers) the way `python SCRIPT ARGS` runs them, in
far fewer interpreters.

Each script runs in a driver process through `runpy.run_path(..., run_name="__main__")`:
fresh globals (a missing import still fails), its own `sys.argv`, file descriptors 1 and
2 pointed at its own files (so a child process it starts writes there too), and its exit
status taken as Python's would be (SystemExit code, 1 after an uncaught exception). What a
driver shares between scripts is only `sys.modules`, so interpreter and MLX start-up are
paid once per driver instead of once per script: that is the whole gain.

A script that kills its driver (a signal inside MLX) is run again alone as a real
subprocess, which gives its true status, and a new driver takes the rest. `standalone`
runs scripts one interpreter each; tests compare the two on a sample as a control.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_DRIVER = r'''
import json, os, runpy, sys, traceback
paths, args, done = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
saved = os.dup(1), os.dup(2)
for i, path in enumerate(paths):
    outs = [open(f"{done}.{i}.{k}", "w+b") for k in (1, 2)]
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(outs[0].fileno(), 1); os.dup2(outs[1].fileno(), 2)
    sys.argv = [path, *args]
    try:
        runpy.run_path(path, run_name="__main__")
        rc = 0
    except SystemExit as e:
        code = e.code
        rc = 0 if code is None else code if isinstance(code, int) else (print(code, file=sys.stderr) or 1)
    except BaseException:
        traceback.print_exc()
        rc = 1
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(saved[0], 1); os.dup2(saved[1], 2)
    for f in outs:
        f.close()
    with open(done, "a") as f:
        f.write(json.dumps([i, rc]) + "\n")
'''


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def _one(path, args, cwd, timeout) -> tuple:
    p = subprocess.run([sys.executable, str(path), *args], check=False, capture_output=True, text=True,
                       cwd=cwd, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def standalone(paths, args=(), *, cwd=None, timeout=120, workers=2) -> list:
    """[(returncode, stdout, stderr)] with one interpreter per script, as a user runs them."""
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda p: _one(p, args, cwd, timeout), paths))


def _drive(paths, args, cwd, timeout, scratch: Path) -> list:
    """One driver over `paths`, restarted after a script that kills it."""
    results, start = [None] * len(paths), 0
    while start < len(paths):
        rest = [str(p) for p in paths[start:]]
        done = scratch / f"done-{start}"
        subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(rest), json.dumps(list(args)), str(done)],
                       check=False, cwd=cwd, timeout=timeout * len(rest), stdin=subprocess.DEVNULL)
        lines = _read(done).splitlines()
        for line in lines:
            i, rc = json.loads(line)
            results[start + i] = (rc, _read(Path(f"{done}.{i}.1")), _read(Path(f"{done}.{i}.2")))
        start += len(lines)
        if start < len(paths):   # the script at `start` ended its driver: its own process says how
            results[start] = _one(paths[start], args, cwd, timeout)
            start += 1
    return results


def run_many(paths, args=(), *, cwd=None, timeout=120, drivers=2) -> list:
    """[(returncode, stdout, stderr)] per script, in order, from `drivers` driver processes."""
    paths = list(paths)
    chunks = [paths[k::drivers] for k in range(drivers)]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(drivers) as pool:
        scratch = [Path(tmp) / str(k) for k in range(drivers)]
        for s in scratch:
            s.mkdir()
        parts = list(pool.map(lambda k: _drive(chunks[k], args, cwd, timeout, scratch[k]), range(drivers)))
    out = [None] * len(paths)
    for k, part in enumerate(parts):
        out[k::drivers] = part
    return out

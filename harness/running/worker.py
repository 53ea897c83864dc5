"""Child process that runs scenarios and streams one JSON line per event.

Running MLX in a child lets the parent turn an abort or segfault into a single
`crashed` record and carry on from the next scenario.
Usage: python -m <package>.running.worker SCENARIOS.json DEVICE START
"""
from __future__ import annotations

import json
import os
import signal
import sys

_PROTO = None


def _protocol_channel():
    """The JSON lines go to a private copy of fd 1, and fd 1 itself to stderr:
    native libraries print to stdout (OpenBLAS's xerbla does, then exits), and
    their text must not interleave with the protocol."""
    global _PROTO
    _PROTO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def _emit(obj) -> None:
    out = _PROTO or sys.stdout
    out.write(json.dumps(obj) + "\n")
    out.flush()


def main(argv=None) -> int:
    path, device, start = (argv or sys.argv[1:])[:3]
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    _protocol_channel()
    from ..core import scenario
    from . import devices, execute
    with open(path, encoding="utf-8") as fh:
        scenarios = scenario.load_catalog(fh.read())
    devices.select(device)
    for i in range(int(start), len(scenarios)):
        _emit({"start": i})
        _emit({"record": execute.run(scenarios[i], device)})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Child process that runs scenarios and streams one JSON line per event.

Running MLX in a child lets the parent turn an abort or segfault into a single
`crashed` record and carry on from the next scenario.
Usage: python -m <package>.running.worker SCENARIOS.json DEVICE START
"""
from __future__ import annotations

import json
import sys


def _emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv=None) -> int:
    path, device, start = (argv or sys.argv[1:])[:3]
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

"""Child process that runs scenarios and streams one JSON line per event.

Running MLX in a child lets the parent turn an abort or segfault into a single
`crashed` record and carry on from the next scenario.
Usage: python -m <package>.running.worker SCENARIOS.json DEVICE START
"""
from __future__ import annotations

import signal
import sys

from ..core import record
from . import channel


def main(argv=None) -> int:
    path, device, start = (argv or sys.argv[1:])[:3]
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    channel.open_protocol()
    from .. import ops
    from ..cases import UnboundOp, bind
    from ..core import scenario
    from . import devices, execute
    with open(path, encoding="utf-8") as fh:
        scenarios = scenario.load_catalog(fh.read())
    ops.registry()   # a registry that cannot load is the environment's failure, before any scenario
    devices.select(device)
    for i in range(int(start), len(scenarios)):
        channel.emit({"start": i})
        try:
            s = bind(scenarios[i])
        except UnboundOp as e:   # evidence naming an op this release lacks: a record saying so
            channel.emit({"record": record.record(scenarios[i].name, device, error=str(e), status="error",
                                                  seconds=0.0)})
            continue
        channel.emit({"record": execute.run(s, device)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
